-- PostgreSQL twin of ../0002_remote_token.sql: the bearer token an external agent asks for (sealed; NULL: none).
ALTER TABLE a2a_remote_agents ADD COLUMN token TEXT;
