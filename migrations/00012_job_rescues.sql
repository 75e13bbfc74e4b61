-- How many times a job was requeued because its lease expired (its worker died, stalled or
-- lost the database). The runner dead-letters a job rescued runner.MaxJobRescues times
-- instead of running it again, so a job that kills its worker (or its connection) every
-- time cannot loop forever. An admin retry starts the count again.

-- +goose Up
ALTER TABLE jobs ADD COLUMN rescues integer NOT NULL DEFAULT 0 CHECK (rescues >= 0);

-- +goose Down
ALTER TABLE jobs DROP COLUMN rescues;
