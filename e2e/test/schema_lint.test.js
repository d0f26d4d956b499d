// Tool schema portability: the MCP Inspector 2.12 CLI lints every tool's
// inputSchema and outputSchema on tools/list (type arrays, subschemas that
// accept anything, bare boolean schemas, remote $refs). With --strict it
// prints each finding on stderr and puts them in the JSON as
// schemaFindings; warnings leave the exit code at 0, so the test reads both.
// Run against the built binary over stdio, in both protocol eras, with and
// without --dev-templates (which adds the conformance fixture tools), and
// over Streamable HTTP.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { binary, scratchDir, startServe } from '../lib/daemon.js';
import { runInspector } from '../lib/inspector.js';

// Tools listed without and with --dev-templates.
const TOOLS = 26;
const TOOLS_WITH_FIXTURES = 49;

// lint runs `mcp-inspector --cli --strict ... --method tools/list` and
// resolves with its exit code, parsed stdout and stderr.
async function lint(args, home) {
  const { code, out, err } = await runInspector([...args, '--method', 'tools/list', '--strict'], home);
  let json;
  try {
    json = JSON.parse(out);
  } catch (e) {
    throw new Error(`inspector ${args.join(' ')} (exit ${code}) printed no JSON: ${e.message}\n${out}\n${err}`);
  }
  return { code, json, stderr: err };
}

// assertPortable checks one lint run: exit 0, the expected tools, no
// findings in the JSON and no finding or summary on stderr.
function assertPortable({ code, json, stderr }, tools) {
  const findings = (json.schemaFindings ?? []).flatMap(t => t.findings.map(f => `${t.toolName} ${f.schema}.${f.path}: ${f.rule}`));
  assert.deepEqual(findings, [], `schema findings:\n${stderr}`);
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /Warning:|Error:|\d+ warnings?|\d+ errors?/, stderr);
  const names = json.result.tools.map(t => t.name);
  assert.equal(names.length, tools, `tools: ${names}`);
  for (const name of ['run_task_template', 'get_task_run', 'list_task_runs', 'get_task_run_events', 'get_runtime_profile']) {
    assert.ok(names.includes(name), `${name} missing from ${names}`);
  }
  for (const tool of json.result.tools) {
    assert.equal(tool.inputSchema?.type, 'object', `${tool.name} inputSchema`);
  }
}

describe('tool schemas pass the MCP Inspector lint with --strict', () => {
  let home;
  let db;
  let daemon;

  before(async () => {
    home = scratchDir('browsertask-e2e-lint-');
    db = path.join(scratchDir(), 'browsertask.db');
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
  });

  after(async () => {
    await daemon?.stop();
  });

  for (const era of ['legacy', 'modern']) {
    for (const dev of [false, true]) {
      test(`stdio, protocol era ${era}${dev ? ', --dev-templates' : ''}: 0 errors, 0 warnings`, async () => {
        const target = [binary(), 'mcp', '--db', db, '--http=off', ...(dev ? ['--dev-templates'] : [])];
        assertPortable(await lint(['--protocol-era', era, ...target], home), dev ? TOOLS_WITH_FIXTURES : TOOLS);
      });
    }
    test(`http (serve --dev-templates), protocol era ${era}: 0 errors, 0 warnings`, async () => {
      assertPortable(await lint(['--protocol-era', era, '--transport', 'http', daemon.url], home), TOOLS_WITH_FIXTURES);
    });
  }
});
