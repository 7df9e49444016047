/**
 * Installing a plugin from a registry (the hub's plugins/<name>/), a local folder inside the install roots, or a
 * git repository (http(s), SSRF-checked shallow clone; optionally a sub-folder). The folder is copied with the tree
 * checks into a staging area and loaded from there — manifest, hooks, [integrity], signature — before it is moved
 * into the plugins folder in one rename.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpError, badRequest, conflict, forbidden, isInside, notFound, safeJoin } from '@talon/module-sdk';
import type { ArtifactService, RegistryService } from '@talon/hub';
import { checkedCopy, TreeError } from './tree.ts';
import { parseManifest } from './manifest.ts';
import type { LoadedPlugin, PluginStore } from './store.ts';

export interface InstallRequest {
  source?: 'registry' | 'local' | 'git';
  name?: string;
  registry?: 'hub' | 'hub-cn';
  path?: string;
  url?: string;
  subdir?: string;
}

export interface InstallDeps {
  store: PluginStore;
  pluginsDir: () => string;
  stagingDir: () => string;
  installRoots: () => string[];
  home: string;
  limits: () => { maxFiles: number; maxBytes: number };
  registry: () => RegistryService | undefined;
  artifacts: () => ArtifactService | undefined;
  /** A store reading from a staging folder, for the checks before the move. */
  stagingStore: (dir: string) => PluginStore;
}

const hubNeeded = (what: string) => new HttpError(503, `${what} needs the hub module, which is not running`);

export async function installPlugin(request: InstallRequest, deps: InstallDeps): Promise<LoadedPlugin> {
  const source = request.source ?? (request.path ? 'local' : request.url ? 'git' : 'registry');
  mkdirSync(deps.stagingDir(), { recursive: true });
  const staging = mkdtempSync(path.join(deps.stagingDir(), 'plugin-'));
  try {
    const from = await resolve(source, request, deps, staging);
    let name: string;
    try {
      name = parseManifest(readFileSync(path.join(from, 'plugin.toml'), 'utf8')).name;
    } catch (err) {
      throw badRequest(`invalid plugin: ${(err as Error).message}`);
    }
    if (deps.store.get(name) || existsSync(path.join(deps.pluginsDir(), name))) throw conflict(`a plugin named '${name}' is already installed`);
    const checked = path.join(staging, 'checked');
    try {
      checkedCopy(from, path.join(checked, name), deps.limits());
    } catch (err) {
      if (err instanceof TreeError) throw badRequest(`cannot install: ${err.message}`);
      throw err;
    }
    const problem = deps.stagingStore(checked).loadOne(name)!.error;
    if (problem)
      throw /integrity|signature/.test(problem) ? forbidden(`plugin '${name}' refused: ${problem}`) : badRequest(`invalid plugin '${name}': ${problem}`);
    mkdirSync(deps.pluginsDir(), { recursive: true });
    renameSync(path.join(checked, name), path.join(deps.pluginsDir(), name));
    return deps.store.loadOne(name)!;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

async function resolve(source: string, request: InstallRequest, deps: InstallDeps, staging: string): Promise<string> {
  if (source === 'registry') {
    if (!request.name) throw badRequest("a registry install needs 'name'");
    const registry = deps.registry();
    if (!registry) throw hubNeeded('installing from a registry');
    return (await registry.stage('plugins', request.name, path.join(staging, 'src'), request.registry)).dir;
  }
  if (source === 'local') {
    if (!request.path) throw badRequest("a local install needs 'path' (an absolute folder)");
    return localFolder(request.path, deps);
  }
  if (!request.url) throw badRequest("a git install needs 'url'");
  const artifacts = deps.artifacts();
  if (!artifacts) throw hubNeeded('installing from git');
  const dest = path.join(staging, 'src');
  await artifacts.clone(request.url, dest);
  const dir = request.subdir ? safeJoin(dest, request.subdir) : dest;
  if (!existsSync(path.join(dir, 'plugin.toml')))
    throw badRequest(`the repository has no plugin.toml${request.subdir ? ` in '${request.subdir}'` : ' at its root (give subdir)'}`);
  return dir;
}

function localFolder(given: string, deps: InstallDeps): string {
  if (!path.isAbsolute(given)) throw badRequest('path must be an absolute path to a plugin folder');
  let real: string;
  try {
    real = realpathSync(given);
  } catch {
    throw notFound(`no plugin folder at '${given}'`);
  }
  if (statSync(real).isFile()) real = path.dirname(real);
  const roots = deps.installRoots().length ? deps.installRoots() : [os.homedir(), deps.home];
  if (!roots.some((root) => existsSync(root) && isInside(realpathSync(root), real)))
    throw forbidden(`'${given}' is outside the folders plugins may be installed from ([plugins] install_roots)`);
  if (!existsSync(path.join(real, 'plugin.toml'))) throw badRequest(`'${given}' has no plugin.toml`);
  return real;
}
