/**
 * What the sinks look for. Secrets: the service's own secret values (environment variables named like keys,
 * tokens and passwords — an exact match is real taint, not a guess), values seen in tool results that look like
 * credentials, and credential shapes. PII: e-mail addresses, phone numbers, card numbers (Luhn), US SSNs.
 * Command injection: chaining, substitution, download-and-run and decode-and-run shapes.
 */
export interface Hit {
  rule: string;
  what: string;
}

const SECRET_NAME = /(_KEY|_TOKEN|_SECRET|_PASSWORD|_PASS|_API_KEY|^AWS_SECRET|_CREDENTIALS?)$/i;

const SECRET_SHAPES: Array<[string, RegExp]> = [
  ['authorization_literal', /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{16,}/i],
  [
    'key_value_secret',
    /\b[A-Za-z0-9_]*?(api[_-]?key|access[_-]?token|auth[_-]?token|secret|password|passwd|client[_-]?secret)["']?\s*[=:]\s*["']?[^\s"'&]{8,}/i,
  ],
  [
    'well_known_prefix',
    /\b(sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_-]{35}|glpat-[A-Za-z0-9_-]{20,})/,
  ],
  ['private_key', /-----BEGIN ([A-Z]+ )?PRIVATE KEY-----/],
];

const PII: Array<[string, RegExp]> = [
  ['pii_email', /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/],
  ['pii_phone', /(?<![\w.])\+?\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{3,4}(?![\w.])/],
  ['pii_ssn', /\b\d{3}-\d{2}-\d{4}\b/],
];

const INJECTION: Array<[string, RegExp]> = [
  ['command_chaining', /;|&&|\|\||\n/],
  ['command_substitution', /`|\$\(/],
  ['download_and_run', /\b(curl|wget)\b[^|]*\|\s*(ba|z|da)?sh\b|\b(curl|wget)\b.*-o\s*\S+.*&&\s*(ba)?sh\b/],
  ['decode_and_run', /base64\s+(-d|--decode)|\beval\b|\bexec\s*\(/],
  ['pipe_to_shell', /\|\s*(sudo\s+)?(ba|z|da)?sh\b/],
  ['network_tool', /\b(curl|wget|nc|ncat|netcat|socat)\b/],
];

/** The service's own secret values (read once per call; the environment can change). */
export function ownSecrets(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && typeof value === 'string' && value.length >= 8)
    .map(([, value]) => value!);
}

export function secretHits(text: string, known: readonly string[]): Hit[] {
  const hits: Hit[] = [];
  if (known.some((v) => text.includes(v))) hits.push({ rule: 'known_secret', what: "a secret value of this service or seen in this turn's tool results" });
  for (const [rule, re] of SECRET_SHAPES) if (re.test(text)) hits.push({ rule, what: 'a credential' });
  return hits;
}

export function piiHits(text: string): Hit[] {
  const hits: Hit[] = [];
  for (const [rule, re] of PII) if (re.test(text)) hits.push({ rule, what: 'personal data' });
  for (const m of text.matchAll(/\b(?:\d[ -]?){13,19}\b/g)) {
    if (luhn(m[0].replace(/\D/g, ''))) {
      hits.push({ rule: 'pii_credit_card', what: 'a payment card number' });
      break;
    }
  }
  return hits;
}

export function injectionHits(command: string): Hit[] {
  return INJECTION.filter(([, re]) => re.test(command)).map(([rule]) => ({ rule, what: 'a command-injection shape' }));
}

/** Credential-looking values in a tool result, remembered for the turn (so they cannot leave through a sink). */
export function credentialValues(text: string): string[] {
  const out: string[] = [];
  for (const [, re] of SECRET_SHAPES) {
    const global = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
    for (const m of text.matchAll(global)) if (m[0].length >= 12) out.push(m[0]);
  }
  return out.slice(0, 50);
}

function luhn(digits: string): boolean {
  if (digits.length < 13 || digits.length > 19) return false;
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

export function hostsIn(text: string): string[] {
  return [...text.matchAll(/\b(?:https?:\/\/)?((?:[a-z0-9-]+\.)+[a-z]{2,}|\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?\b/gi)].map((m) => m[1].toLowerCase());
}
