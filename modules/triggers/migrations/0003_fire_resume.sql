-- What a pending fire's turn needs to be resumed by another process when the one that fired it dies: the prompt as it
-- was made from the event, and the chain depth it runs at.
ALTER TABLE triggers_fires ADD COLUMN prompt TEXT;
ALTER TABLE triggers_fires ADD COLUMN depth INTEGER NOT NULL DEFAULT 1;
