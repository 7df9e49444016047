-- PostgreSQL twin of ../0002_media.sql (docs/decisions-fleet.md maps the types).
-- Media calls (images, speech, music, video, transcription) are rows of usage_calls too, so they count in every
-- total, budget and report with the model calls. kind: 'llm' for a model call, else the media kind; units and unit:
-- what a media call used (images, characters, seconds, songs); unpriced: 1 when units were used and the catalogue has
-- no price for them (recorded at cost 0).
ALTER TABLE usage_calls ADD COLUMN kind TEXT NOT NULL DEFAULT 'llm';
ALTER TABLE usage_calls ADD COLUMN units DOUBLE PRECISION;
ALTER TABLE usage_calls ADD COLUMN unit TEXT;
ALTER TABLE usage_calls ADD COLUMN unpriced BIGINT NOT NULL DEFAULT 0;
