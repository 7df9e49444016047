/**
 * What a plugin signature covers: plugin.toml and every declared hook file, each by its SHA-256, hashed in path
 * order into one content hash. The Ed25519 envelope (manifest-signing, kind 'plugin') signs that hash and is kept
 * in SIGNATURE.json beside plugin.toml; changing any covered file breaks it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HttpError, badRequest } from '@talon/module-sdk';
import type { ManifestSigner } from '@talon/manifest-signing';
import type { PluginManifest } from './manifest.ts';

export const SIGNATURE_FILE = 'SIGNATURE.json';

export const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** The covered files' hashes and the content hash; a declared hook that is missing is an Error. */
export function coveredHashes(dir: string, manifest: PluginManifest): { files: Record<string, string>; contentHash: string } {
  const rels = ['plugin.toml', ...new Set(Object.values(manifest.hooks))].sort();
  const files: Record<string, string> = {};
  for (const rel of rels) {
    const full = path.join(dir, rel);
    if (!existsSync(full)) throw new Error(`'${rel}' is missing`);
    files[rel] = sha256(readFileSync(full));
  }
  const contentHash = sha256(rels.map((rel) => `${rel}\0${files[rel]}\n`).join(''));
  return { files, contentHash };
}

/** The signature check at load: undefined when unsigned or valid, else the reason it fails. */
export function checkSignature(dir: string, manifest: PluginManifest, signer: ManifestSigner | undefined): { signed: boolean; problem?: string } {
  const file = path.join(dir, SIGNATURE_FILE);
  if (!existsSync(file)) return { signed: false };
  if (!signer) return { signed: true, problem: 'the plugin is signed but signatures cannot be checked (the manifest-signing module is not running)' };
  let contentHash: string;
  try {
    contentHash = coveredHashes(dir, manifest).contentHash;
  } catch (err) {
    return { signed: true, problem: (err as Error).message };
  }
  const outcome = signer.verify(readFileSync(file, 'utf8'), { kind: 'plugin', contentHash });
  return outcome.ok ? { signed: true } : { signed: true, problem: `signature check failed: ${outcome.reason}` };
}

export function signPlugin(dir: string, manifest: PluginManifest, signer: ManifestSigner | undefined) {
  if (!signer) throw new HttpError(503, 'signing needs the manifest-signing module, which is not running');
  if (!Object.keys(manifest.hooks).length) throw badRequest(`plugin '${manifest.name}' declares no hooks: nothing to sign`);
  let covered: ReturnType<typeof coveredHashes>;
  try {
    covered = coveredHashes(dir, manifest);
  } catch (err) {
    throw badRequest(`cannot sign plugin '${manifest.name}': ${(err as Error).message}`);
  }
  const envelope = signer.sign('plugin', covered.contentHash);
  writeFileSync(path.join(dir, SIGNATURE_FILE), `${JSON.stringify({ ...envelope, files: covered.files }, null, 2)}\n`);
  return { envelope, ...covered };
}
