// The official MCP conformance suite against `browsertask serve`
// (issue 3, acceptance 8): every check of the four scenarios must pass.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { scratchDir, startServe } from '../lib/daemon.js';

const require = createRequire(import.meta.url);
const cli = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist', 'index.js');

let daemon;
before(async () => {
  daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
});
after(async () => {
  await daemon?.stop();
});

for (const scenario of ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']) {
  test(`8: conformance ${scenario} (--spec-version 2025-11-25)`, () => {
    const out = scratchDir('browsertask-conformance-');
    const r = spawnSync(process.execPath, [cli, 'server', '--url', daemon.url, '--spec-version', '2025-11-25',
      '--scenario', scenario, '-o', out], { encoding: 'utf8', timeout: 120000 });
    const output = `${r.stdout}\n${r.stderr}`;
    assert.equal(r.status, 0, `conformance exited ${r.status}:\n${output}`);
    const runs = readdirSync(out);
    assert.equal(runs.length, 1, `results in ${out}: ${runs}`);
    const checks = JSON.parse(readFileSync(path.join(out, runs[0], 'checks.json'), 'utf8'));
    assert.ok(checks.length >= 1, 'no checks ran');
    const bad = checks.filter(c => c.status !== 'SUCCESS');
    assert.deepEqual(bad.map(c => `${c.id}: ${c.status} ${c.errorMessage ?? ''}`), [], output);
    console.log(`conformance ${scenario}: ${checks.length}/${checks.length} checks passed`);
  });
}
