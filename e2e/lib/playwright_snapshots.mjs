// Reads URLs (one per line) on stdin, opens each with @playwright/mcp's
// browser_navigate and prints one JSON line per URL on stdout with the text
// of its browser_snapshot answer: {url, text, snapshot} where snapshot is
// the YAML block of the page alone. `go run ./bench -only snapshot` runs it
// to compare snapshot sizes on the same pages; it is not a test.
//
// Usage: node lib/playwright_snapshots.mjs CHROMIUM [EXTRA_CHROMIUM_ARG...]
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [chromium, ...args] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'pwmcp-'));
const config = join(dir, 'config.json');
writeFileSync(config, JSON.stringify({
  browser: {
    browserName: 'chromium', isolated: true,
    launchOptions: { headless: true, executablePath: chromium, chromiumSandbox: false, args },
  },
}));
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'node_modules', '@playwright', 'mcp', 'cli.js');
const transport = new StdioClientTransport({
  command: process.execPath, args: [cli, '--config', config, '--output-dir', dir], stderr: 'inherit',
});
const client = new Client({ name: 'browsertask-bench', version: '0' });
await client.connect(transport);
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const urls = readFileSync(0, 'utf8').split('\n').filter(Boolean);
for (const url of urls) {
  try {
    await client.callTool({ name: 'browser_navigate', arguments: { url } });
    const t = text(await client.callTool({ name: 'browser_snapshot', arguments: {} }));
    const m = t.match(/```yaml\n([\s\S]*?)```/);
    process.stdout.write(JSON.stringify({ url, text: t, snapshot: m ? m[1] : '' }) + '\n');
  } catch (e) {
    process.stdout.write(JSON.stringify({ url, error: String(e) }) + '\n');
  }
}
await client.close();
