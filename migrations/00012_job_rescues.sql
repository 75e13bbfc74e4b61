-- How many times in a row a job was requeued because its lease expired (its worker died,
-- stalled or lost the database). The runner dead-letters a job rescued runner.Config.MaxRescues
-- times in a row instead of running it again, so a job that kills its worker (or its
-- connection) every time cannot loop forever. A run that ends in its worker's hands (a pause
-- for review, a scheduled retry) and an admin retry start the count again.

-- +goose Up
ALTER TABLE jobs ADD COLUMN rescues integer NOT NULL DEFAULT 0 CHECK (rescues >= 0);

-- +goose Down
ALTER TABLE jobs DROP COLUMN rescues;
