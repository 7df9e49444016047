import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestKernel, waitFor, type TestKernel } from '@talon/testing';
import type { ManifestSigner } from '@talon/manifest-signing';

let k: TestKernel;
let other: TestKernel;
const MANIFEST = 'name = "signed-agent"\n[model]\nprovider = "default"\nmodel = "default"\n';
const json = async <T>(res: Response) => (await res.json()) as T;
/** Audit entries of one type that mention text in their details. */
const audited = async (type: string, text: string) =>
  (await json<{ entries: Array<{ details: unknown }> }>(await k.request(`/api/audit/recent?limit=500&event_type=${type}`))).entries.filter((e) =>
    JSON.stringify(e.details).includes(text),
  );

before(async () => {
  // Two nodes: "other" signs, "k" trusts it (and itself).
  other = await startTestKernel({ only: ['manifest-signing', 'error-envelope'] });
  const otherKey = (await json<{ public_key: string }>(await other.request('/api/signing/identity'))).public_key;
  k = await startTestKernel({
    only: ['manifest-signing', 'agents', 'skills', 'prompt-guard', 'audit', 'error-envelope'],
    config: `[default_model]\nprovider = "openai"\nmodel = "m"\n[manifest_signing]\ntrusted_signers = ["${otherKey}"]\ntrust_self = false\n`,
  });
});
after(async () => {
  await k?.stop();
  await other?.stop();
});

test('the node identity is generated on first start, kept private (0600) and its public key served', async () => {
  const id = await json<{ algorithm: string; public_key: string; fingerprint: string }>(await k.request('/api/signing/identity'));
  assert.equal(id.algorithm, 'Ed25519');
  assert.match(id.public_key, /^[0-9a-f]{64}$/);
  assert.equal(statSync(path.join(k.home, 'identity', 'node_ed25519.pem')).mode & 0o777, 0o600);
  assert.doesNotMatch(JSON.stringify(id), /PRIVATE/);
});

test('a spawn with a signed_manifest from a trusted signer passes; tampered, untrusted or malformed ones are refused', async () => {
  const envelope = await json<Record<string, unknown>>(await other.request('/api/signing/sign', { method: 'POST', json: { manifest_toml: MANIFEST } }));
  const ok = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST, signed_manifest: JSON.stringify(envelope) } });
  assert.equal(ok.status, 201);
  const tampered = MANIFEST.replace('signed-agent', 'evil-agent');
  const bad = await k.request('/api/agents', { method: 'POST', json: { manifest_toml: tampered, signed_manifest: JSON.stringify(envelope) } });
  assert.equal(bad.status, 403);
  assert.match((await json<{ error: string }>(bad)).error, /signed_manifest refused/);
  await waitFor(async () => (await audited('manifest_rejected', 'evil-agent')).length === 1, 5000, 'the refusal in the audit trail');
  const selfSigned = await json<Record<string, unknown>>(
    await k.request('/api/signing/sign', { method: 'POST', json: { manifest_toml: MANIFEST.replace('signed-agent', 'self') } }),
  );
  const untrusted = await k.request('/api/agents', {
    method: 'POST',
    json: { manifest_toml: MANIFEST.replace('signed-agent', 'self'), signed_manifest: JSON.stringify(selfSigned) },
  });
  assert.equal(untrusted.status, 403);
  assert.match((await json<{ error: string }>(untrusted)).error, /not in \[manifest_signing\] trusted_signers/);
  const forged = { ...envelope, signature: Buffer.alloc(64).toString('base64') };
  assert.equal(
    (
      await k.request('/api/agents', {
        method: 'POST',
        json: { manifest_toml: MANIFEST.replace('signed-agent', 'x2'), signed_manifest: JSON.stringify(forged) },
      })
    ).status,
    403,
  );
  assert.equal(
    (await k.request('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST.replace('signed-agent', 'x3'), signed_manifest: '{not json' } })).status,
    400,
  );
  // Unsigned spawns still work unless the node requires signatures.
  assert.equal((await k.request('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST.replace('signed-agent', 'plain') } })).status, 201);
});

test('verify route; sign needs its input', async () => {
  const envelope = await json<Record<string, unknown>>(await other.request('/api/signing/sign', { method: 'POST', json: { manifest_toml: MANIFEST } }));
  assert.deepEqual(
    (await json<{ ok: boolean }>(await k.request('/api/signing/verify', { method: 'POST', json: { envelope, manifest_toml: MANIFEST } }))).ok,
    true,
  );
  assert.equal((await json<{ ok: boolean }>(await k.request('/api/signing/verify', { method: 'POST', json: { envelope, manifest_toml: 'x' } }))).ok, false);
  assert.equal((await k.request('/api/signing/sign', { method: 'POST', json: {} })).status, 400);
  assert.equal((await k.request('/api/signing/sign', { method: 'POST', json: { kind: 'skill' } })).status, 400);
  assert.equal((await k.request('/api/signing/verify', { method: 'POST', json: {} })).status, 400);
});

test('skills: install with verify requires a valid SIGNATURE.json by a trusted signer', async () => {
  const signer = other.kernel.services.view('manifest-signing.signer') as ManifestSigner;
  const make = (name: string) => {
    const dir = path.join(k.home, `src-${name}`);
    const skill = path.join(dir, name);
    mkdirSync(skill, { recursive: true });
    writeFileSync(path.join(skill, 'SKILL.md'), `---\nname: ${name}\ndescription: signed test\n---\nBe precise.\n`);
    return skill;
  };
  const signed = make('signed-skill');
  writeFileSync(path.join(signed, 'SIGNATURE.json'), JSON.stringify(signer.sign('skill', signer.hashTree(signed))));
  assert.equal((await k.request('/api/skills/install', { method: 'POST', json: { source: signed, verify: true } })).status, 201);
  const unsigned = make('unsigned-skill');
  const r1 = await k.request('/api/skills/install', { method: 'POST', json: { source: unsigned, verify: true } });
  assert.equal(r1.status, 403);
  assert.match((await json<{ error: string }>(r1)).error, /not signed/);
  await waitFor(async () => (await audited('skill_blocked', 'unsigned-skill')).length === 1, 5000, 'the refusal in the audit trail');
  const changed = make('changed-skill');
  writeFileSync(path.join(changed, 'SIGNATURE.json'), JSON.stringify(signer.sign('skill', signer.hashTree(changed))));
  writeFileSync(path.join(changed, 'SKILL.md'), '---\nname: changed-skill\ndescription: changed after signing\n---\nx\n');
  const r2 = await k.request('/api/skills/install', { method: 'POST', json: { source: changed, verify: true } });
  assert.equal(r2.status, 403);
  assert.match((await json<{ error: string }>(r2)).error, /content hash mismatch/);
  assert.equal((await k.request('/api/skills/install', { method: 'POST', json: { source: unsigned } })).status, 201);
});

test('require_signed_manifests refuses unsigned API spawns', async () => {
  const strict = await startTestKernel({
    only: ['manifest-signing', 'agents', 'error-envelope'],
    config: '[default_model]\nprovider = "openai"\nmodel = "m"\n[manifest_signing]\nrequire_signed_manifests = true\n',
  });
  try {
    const res = await strict.request('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST } });
    assert.equal(res.status, 403);
    const envelope = await json<Record<string, unknown>>(await strict.request('/api/signing/sign', { method: 'POST', json: { manifest_toml: MANIFEST } }));
    assert.equal(
      (await strict.request('/api/agents', { method: 'POST', json: { manifest_toml: MANIFEST, signed_manifest: JSON.stringify(envelope) } })).status,
      201,
    );
  } finally {
    await strict.stop();
  }
});
