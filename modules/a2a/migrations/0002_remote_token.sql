-- The bearer token an external agent asks for (sealed by the service vault; NULL: none). Never read back.
ALTER TABLE a2a_remote_agents ADD COLUMN token TEXT;
