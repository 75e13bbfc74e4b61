-- Prune walks the finished threads in thread id order, a page at a time (JobFinishedThreads):
-- this index gives it that order and finds a thread's other jobs without scanning the table.
-- thread_id never changes after insert, so job updates stay HOT.

-- +goose Up
CREATE INDEX jobs_thread ON jobs (thread_id);

-- +goose Down
DROP INDEX jobs_thread;
