/**
 * The names a manifest uses, checked before it becomes an agent (spawn, clone, bulk, hands, a manifest update,
 * POST /api/agents/validate): a name the service does not know would otherwise be accepted and fail at the first
 * chat. The provider and the model are checked against the catalog, the tools against the contributed tools;
 * the modules that own other names check them through agentHooks.checkManifest (skills, MCP servers).
 */
import type { AgentManifest, ManifestCheck, ManifestProblem, ToolDefinition } from '@talon/agents';
import type { CatalogService } from '@talon/catalog';
import { findTool } from './tools.ts';

export interface ManifestCheckDeps {
  catalog: () => CatalogService | undefined;
  tools: () => readonly ToolDefinition[];
  /** agentHooks.checkManifest. */
  check: (check: ManifestCheck) => void;
}

export function manifestProblems(manifest: AgentManifest, deps: ManifestCheckDeps): ManifestProblem[] {
  const problems: ManifestProblem[] = [];
  const modelProblem = checkModel(manifest.model, deps.catalog());
  if (modelProblem) problems.push(modelProblem);
  const tools = deps.tools();
  const unknownTools = new Set(manifest.capabilities.tools.filter((name) => name !== '*' && !findTool(tools, name)));
  deps.check({ manifest, unknownTools, problems });
  for (const name of unknownTools) problems.push({ field: 'capabilities.tools', message: `unknown tool '${name}'` });
  return problems;
}

/**
 * Provider 'default' stands for [default_model], whatever it is then: not checked. Any other provider must be in
 * the catalog or have a base URL (the manifest's base_url or one configured for it: an OpenAI-compatible endpoint
 * of one's own, as the llm module resolves it). The model of a catalogued provider that needs a key must be one of
 * its catalogued models (id or alias); a local runtime (a provider needing no key: Ollama, LM Studio…) serves
 * whatever is installed there, and a custom endpoint whatever it has, so those names are not checked.
 */
function checkModel(model: AgentManifest['model'], catalog: CatalogService | undefined): ManifestProblem | undefined {
  const { provider } = model;
  if (!catalog || provider === 'default') return undefined;
  const entry = catalog.provider(provider);
  if (!entry) {
    if (model.base_url || catalog.configuredUrl(provider)) return undefined;
    return {
      field: 'model.provider',
      message: `unknown provider '${provider}': it is not in the catalog; set base_url for a custom OpenAI-compatible endpoint`,
    };
  }
  if (!entry.key_required || model.base_url) return undefined;
  const wanted = model.model;
  const id = catalog.resolveAlias(wanted);
  if (catalog.models({ provider }).some((m) => m.id === id || m.id === wanted || m.aliases?.includes(wanted))) return undefined;
  return { field: 'model.model', message: `unknown model '${wanted}' for provider '${provider}' (GET /api/models?provider=${provider} lists them)` };
}
