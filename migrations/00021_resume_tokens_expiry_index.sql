-- Expired resume tokens are deleted a while after they expire (weft prune, and the server's
-- scheduled prune), oldest first: by this index.

-- +goose Up
CREATE INDEX resume_tokens_expires ON resume_tokens (expires_at);

-- +goose Down
DROP INDEX resume_tokens_expires;
