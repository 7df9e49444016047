-- PostgreSQL twin of ../0003_runs_node.sql (docs/decisions-fleet.md maps the types).
-- The node (process, ctx.nodes.id) executing a run: at start, and when a node dies, only the open runs of dead nodes
-- are failed as interrupted, never those another live process is executing. Runs written before have none.
ALTER TABLE workflows_runs ADD COLUMN node TEXT;
CREATE INDEX workflows_runs_node ON workflows_runs (node) WHERE state IN ('Pending', 'Running');
