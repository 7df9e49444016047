-- Workflow templates saved by users (POST /api/workflows/{id}/save-as-template), as JSON text; the registry's are read
-- from the hub and never stored here.
CREATE TABLE workflows_templates (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  template TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
