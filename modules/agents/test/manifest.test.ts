import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseManifest } from '../services/manifest.ts';
import { HttpError } from '@talon/module-sdk';
import { HELLO_WORLD } from './helpers.ts';

describe('agents: manifest parsing', () => {
  test("the reference's hello-world template loads with every key", () => {
    const m = parseManifest(HELLO_WORLD);
    assert.equal(m.name, 'hello-world');
    assert.equal(m.version, '0.4.3-beta3-20260314');
    assert.equal(m.author, 'librefang');
    assert.equal(m.module, 'builtin:chat');
    assert.deepEqual(m.model, {
      provider: 'default',
      model: 'default',
      max_tokens: 4096,
      temperature: 0.6,
      system_prompt: 'You are Hello World, a friendly and approachable agent in the LibreFang Agent OS.\nGreet people warmly.',
    });
    assert.equal(m.capabilities.max_llm_tokens_per_hour, 100000);
    assert.equal(m.capabilities.agent_spawn, false);
    assert.deepEqual(m.capabilities.memory_write, ['self.*']);
    assert.equal(m.capabilities.tools.length, 7);
    assert.deepEqual(m.extra.mcp_servers, ['memory', 'fetch']);
    assert.equal(m.extra.skills_disabled, true);
    assert.deepEqual((m.extra.metadata as { routing: { weak_aliases: string[] } }).routing.weak_aliases.length, 4);
    assert.equal((m.extra.i18n as { zh: { name: string } }).zh.name, 'Hello World');
    assert.deepEqual({ ...(m.extra.resources as object) }, { max_llm_tokens_per_hour: 100000 });
  });

  test('lenient: a scalar where a list is expected; unknown keys kept; [capabilities] cap wins', () => {
    const m = parseManifest(
      'name = "x"\ntags = "solo"\n[capabilities]\ntools = "*"\nshell = "git *"\nmax_llm_tokens_per_hour = 5\nofp_discover = true\n[model]\nname = "gpt-4o"\ncontext_window = 8000\n[resources]\nmax_llm_tokens_per_hour = 9\n',
    );
    assert.deepEqual(m.tags, ['solo']);
    assert.deepEqual(m.capabilities.tools, ['*']);
    assert.deepEqual(m.capabilities.shell, ['git *']);
    assert.equal(m.capabilities.max_llm_tokens_per_hour, 5);
    assert.equal(m.model.model, 'gpt-4o');
    assert.deepEqual(m.extra.model, { context_window: 8000 });
    assert.deepEqual(m.extra.capabilities, { ofp_discover: true });
    assert.equal(m.model.provider, 'default');
  });

  test('problems are 400s that name the key', () => {
    const cases: Array<[string, RegExp]> = [
      ['name = ', /invalid manifest/],
      ['version = "1"', /missing required key 'name'/],
      ['name = 3', /'name' must be a non-empty string/],
      ['name = "x"\n[model]\nmax_tokens = "lots"', /'model.max_tokens' must be a number/],
      ['name = "x"\n[capabilities]\ntools = [1, 2]', /'capabilities.tools' must be a list of strings/],
      ['name = "x"\nmodel = "gpt"', /'model' must be a table/],
      ...['1e308', 'inf', '-5', '2.5', '10000000001'].map((v): [string, RegExp] => [
        `name = "x"\n[capabilities]\nmax_llm_tokens_per_hour = ${v}`,
        /'capabilities.max_llm_tokens_per_hour' must be a whole number of tokens from 0 \(unlimited\) to 10000000000/,
      ]),
      ['name = "x"\n[resources]\nmax_llm_tokens_per_hour = nan', /'resources.max_llm_tokens_per_hour' must be a whole number of tokens/],
    ];
    for (const [toml, pattern] of cases) {
      assert.throws(
        () => parseManifest(toml),
        (err: unknown) => err instanceof HttpError && err.statusCode === 400 && pattern.test(err.message),
        toml,
      );
    }
  });
});
