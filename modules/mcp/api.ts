/**
 * Contract of the mcp module: the catalogue of installable MCP servers and the servers installed from it, for
 * modules that present them another way (extensions). Credentials go in and are stored sealed; they never come out.
 */
import { serviceRef } from '@talon/module-sdk';

export interface McpRequiredEnv {
  name: string;
  label: string;
  help: string;
  is_secret: boolean;
  get_url: string;
}

/** A catalogue template (the registry's mcp/<id>.toml format). */
export interface McpTemplate {
  id: string;
  name: string;
  description: string;
  category: string;
  icon: string;
  tags: string[];
  transport: { type: string; command?: string; args: string[]; url?: string };
  required_env: McpRequiredEnv[];
  setup_instructions: string;
  /** 'builtin', a folder path or a URL. */
  source: string;
}

/** A configured server as health sees it: never an env or header value. */
export interface McpServerState {
  id: string;
  name: string;
  template_id: string | null;
  /** 'connecting', 'connected', 'error' or 'stopped'. */
  status: string;
  connected: boolean;
  tool_count: number;
  last_error: string | null;
  /** 'config' (config.toml) or 'api'. */
  source: string;
}

export interface McpIntegrations {
  catalog(): McpTemplate[];
  /** A template from its TOML text; throws an Error naming what is wrong. */
  parseTemplate(toml: string, source: string): McpTemplate;
  servers(): McpServerState[];
  /**
   * Adds a server from a template (of the catalogue or parsed) with its credentials (environment values, sealed);
   * it connects in the background. HttpError 400 (missing credentials), 409 (name taken).
   */
  install(template: McpTemplate, credentials: Record<string, string>): Promise<McpServerState>;
  /** Removes a server added through the API (stops a stdio server). HttpError 404, 409 (defined in config.toml). */
  uninstall(idOrName: string): Promise<void>;
}

export const mcpIntegrations = serviceRef<McpIntegrations>('mcp.integrations');
