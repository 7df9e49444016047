/**
 * The Bot Framework's authentication of an incoming activity (its "Authentication for bots" spec): the request's
 * `Authorization: Bearer <JWT>` is signed RS256 by a key of the OpenID metadata's JWKS, issued by
 * https://api.botframework.com, for this bot (audience = app_id), not expired (five minutes of clock skew, as the
 * spec allows), and carries a `serviceurl` claim that must equal the activity's serviceUrl; the key must endorse the
 * activity's channelId when it lists endorsements. The token alone is checked before the body is read; the claims
 * tied to the body are checked once it is parsed (`bodyProblem`). jose does the JOSE work.
 */
import { errors, importJWK, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { BotFrameworkKeys } from './keys.ts';

export const BOT_FRAMEWORK_ISSUER = 'https://api.botframework.com';
const CLOCK_SKEW_SECONDS = 300;

/** What a valid token says that the body must agree with. */
export interface VerifiedToken {
  serviceUrl: string;
  endorsements?: string[];
}

export type TokenCheck = { ok: true; token: VerifiedToken } | { ok: false; problem: string };

/** Checks the Authorization header; rejects only with KeysUnavailable (the keys could not be read). */
export async function verifyAuthorization(header: unknown, keys: BotFrameworkKeys, appId: string): Promise<TokenCheck> {
  const match = typeof header === 'string' ? /^Bearer ([A-Za-z0-9_\-.]+)$/.exec(header) : null;
  if (!match) return { ok: false, problem: 'missing Authorization: Bearer <token>' };
  let endorsements: string[] | undefined;
  const getKey: JWTVerifyGetKey = async (protectedHeader) => {
    if (!protectedHeader.kid) throw new errors.JWSInvalid('the token names no key (kid)');
    const key = await keys.find(protectedHeader.kid);
    if (!key) throw new errors.JWKSNoMatchingKey('the token is signed by a key the Bot Framework does not list');
    endorsements = Array.isArray(key.endorsements) ? key.endorsements.filter((e) => typeof e === 'string') : undefined;
    return importJWK(key, 'RS256');
  };
  try {
    const { payload } = await jwtVerify(match[1]!, getKey, {
      issuer: BOT_FRAMEWORK_ISSUER,
      audience: appId,
      algorithms: ['RS256'],
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ['exp'],
    });
    const serviceUrl = payload.serviceurl;
    if (typeof serviceUrl !== 'string') return { ok: false, problem: 'the token has no serviceurl claim' };
    return { ok: true, token: { serviceUrl, ...(endorsements ? { endorsements } : {}) } };
  } catch (err) {
    if (err instanceof Error && err.name === 'KeysUnavailable') throw err;
    return { ok: false, problem: tokenProblem(err) };
  }
}

/** The claims tied to the activity: its serviceUrl and the channel the key endorses. */
export function bodyProblem(token: VerifiedToken, activity: { serviceUrl: string; channelId: string }): string | undefined {
  if (token.serviceUrl !== activity.serviceUrl) return "the token's serviceurl claim does not match the activity's serviceUrl";
  if (token.endorsements && !token.endorsements.includes(activity.channelId)) return `the signing key does not endorse channel ${activity.channelId}`;
  return undefined;
}

/** jose's refusals in words; never the token or a key. */
function tokenProblem(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) return `the token's ${err.claim} claim is not accepted (${err.reason})`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the token's signature does not verify";
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token is not signed with RS256';
  if (err instanceof errors.JOSEError) return `the token is not valid: ${err.message}`;
  return 'the token could not be checked';
}
