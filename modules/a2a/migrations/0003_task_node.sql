-- The process (node) that serves a task: when it dies, another process fails its running tasks; a process that starts
-- leaves those of the live ones alone.
ALTER TABLE a2a_tasks ADD COLUMN node TEXT;
CREATE INDEX a2a_tasks_node ON a2a_tasks (node) WHERE node IS NOT NULL;
