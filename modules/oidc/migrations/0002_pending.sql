-- sign-ins begun and not yet called back (state, nonce, PKCE verifier, redirect), in the database so that the callback
-- may land on any process or node; ten minutes, single use (taken by a DELETE … RETURNING), and capped in number
CREATE TABLE oidc_pending (
  state TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  verifier TEXT NOT NULL,
  nonce TEXT NOT NULL,
  redirect_uri TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX oidc_pending_created ON oidc_pending (created_at);
