import type { Routes } from '@talon/module-sdk';
import type { Totp } from '../services/totp.ts';
import { codeBody, setupBody } from './schemas.ts';

const tags = ['approvals'];

export function totpRoutes(app: Routes, totp: Totp, enforced: () => boolean): void {
  app.post(
    '/api/approvals/totp/setup',
    { schema: { summary: 'Starts TOTP enrollment: secret, otpauth:// URI, QR code, recovery codes', tags, body: setupBody } },
    async (request) => ({
      ...(await totp.setup(request.body.current_code)),
      message: 'Add the secret to an authenticator app, keep the recovery codes, then POST /api/approvals/totp/confirm {code}',
    }),
  );

  app.post('/api/approvals/totp/confirm', { schema: { summary: 'Confirms TOTP enrollment with a current code', tags, body: codeBody } }, async (request) => {
    await totp.confirm(request.body.code);
    return { status: 'confirmed', message: 'TOTP enrollment confirmed' };
  });

  app.get('/api/approvals/totp/status', { schema: { summary: 'TOTP enrollment status', tags } }, async () => totp.status(enforced()));

  const revoke = async (request: { body: { code: string } }) => {
    await totp.revoke(request.body.code);
    return { status: 'revoked', message: 'TOTP enrollment removed' };
  };
  app.delete('/api/approvals/totp', { schema: { summary: 'Removes the TOTP enrollment (a TOTP or recovery code)', tags, body: codeBody } }, revoke);
  app.post(
    '/api/approvals/totp/revoke',
    { schema: { summary: 'Removes the TOTP enrollment (alias of DELETE /api/approvals/totp)', tags, body: codeBody } },
    revoke,
  );
}
