-- PostgreSQL twin of ../0003_task_node.sql: the process (node) that serves a task; when it dies, another process fails
-- its running tasks.
ALTER TABLE a2a_tasks ADD COLUMN node TEXT;
CREATE INDEX a2a_tasks_node ON a2a_tasks (node) WHERE node IS NOT NULL;
