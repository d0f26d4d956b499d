// The interactive tools on a session's page (browser_navigate, browser_act,
// browser_wait, browser_snapshot, browser_screenshot) (issue 32, acceptance 2's first
// half) driven by the TypeScript SDK client over Streamable HTTP and stdio:
// search a small shop, open a product, choose a quantity, add it to the
// cart; the shop's own cart must hold it.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import path from 'node:path';

import { connectHTTP, connectStdio, scratchDir, startServe } from '../lib/daemon.js';

const PRODUCTS = ['Blue mug', 'Red mug', 'Green teapot'];

// startShop serves the shop on loopback; carts() lists what was added.
async function startShop() {
  const added = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://shop');
    const page = (title, body) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><title>${title}</title><header><nav><a href="/">Shop</a> <a href="/cart">Cart</a></nav></header><main>${body}</main>`);
    };
    if (u.pathname === '/') {
      page('Shop', '<h1>Shop</h1><form action="/search" role="search"><input name=q aria-label="Search products"><button>Search</button></form>');
    } else if (u.pathname === '/search') {
      const q = (u.searchParams.get('q') ?? '').toLowerCase();
      const items = PRODUCTS.map((p, i) => p.toLowerCase().includes(q) ? `<li><a href="/product/${i}">${p}</a></li>` : '').join('');
      page('Results', `<h1>Results</h1><ul>${items}</ul>`);
    } else if (u.pathname.startsWith('/product/')) {
      const p = PRODUCTS[Number(u.pathname.slice(9))];
      page(p, `<h1>${p}</h1><form method=post action="/cart"><input type=hidden name=p value="${p}">` +
        '<label>Quantity <select name=qty><option>1<option>2<option>3</select></label><button>Add to cart</button></form>');
    } else if (u.pathname === '/cart' && req.method === 'POST') {
      let body = '';
      req.on('data', c => { body += c; });
      req.on('end', () => {
        const f = new URLSearchParams(body);
        added.push(`${f.get('p')} × ${f.get('qty')}`);
        res.writeHead(303, { location: '/cart' });
        res.end();
      });
    } else if (u.pathname === '/cart') {
      page('Cart', '<h1>Cart</h1>' + added.map(a => `<p>${a}</p>`).join(''));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (p) => `http://127.0.0.1:${server.address().port}${p}`,
    added: () => [...added],
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(resolve); }),
  };
}

async function call(client, name, args) {
  const res = await client.callTool({ name, arguments: args });
  const text = (res.content ?? []).filter(c => c.type === 'text').map(c => c.text).join('');
  return { res, text };
}

function refOf(snap, role, name) {
  const m = new RegExp(`^\\s*(?:\\+ +)?(e\\d+) ${role} "${name}"`, 'm').exec(snap);
  assert.ok(m, `no ${role} "${name}" in:\n${snap}`);
  return m[1];
}

// waitFor answers the page's snapshot once it shows want (browser_wait: a
// navigation an action started may end after the action's answer).
async function waitFor(client, sessionId, want) {
  const { res, text } = await call(client, 'browser_wait', { sessionId, text: want, timeoutMs: 60000 });
  assert.ok(!res.isError, JSON.stringify(res.structuredContent));
  return text;
}

async function journey(client, shop) {
  const { res: created } = await call(client, 'create_browser_session', {});
  assert.ok(!created.isError, JSON.stringify(created));
  const sessionId = created.structuredContent.sessionId;
  const nav = await call(client, 'browser_navigate', { sessionId, url: shop.url('/') });
  assert.equal(nav.res.structuredContent.status, 200);
  const box = refOf(nav.text, 'textbox', 'Search products');
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: box, action: 'fill', value: 'mug' })).res.isError);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: box, action: 'press', value: 'Enter' })).res.isError);
  let snap = await waitFor(client, sessionId, 'Results');
  assert.match(snap, /link "Red mug"/);
  assert.doesNotMatch(snap, /teapot/);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(snap, 'link', 'Blue mug'), action: 'click' })).res.isError);
  snap = await waitFor(client, sessionId, 'Quantity');
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(snap, 'combobox', 'Quantity'), action: 'select', value: '2' })).res.isError);
  assert.ok(!(await call(client, 'browser_act', { sessionId, ref: refOf(snap, 'button', 'Add to cart'), action: 'click' })).res.isError);
  await waitFor(client, sessionId, 'Blue mug × 2');
  const shot = await call(client, 'browser_screenshot', { sessionId });
  assert.equal(shot.res.content[0].type, 'image');
  assert.equal(shot.res.content[0].mimeType, 'image/png');
  const bad = await call(client, 'browser_act', { sessionId, ref: 'e999', action: 'click' });
  assert.equal(bad.res.isError, true);
  assert.equal(bad.res.structuredContent.errorCode, 'INVALID_PARAMETER');
}

describe('interactive tools on a session (TypeScript SDK)', () => {
  let shop;
  let daemon;
  before(async () => { shop = await startShop(); });
  after(async () => { await daemon?.stop(); await shop?.close(); });

  test('over Streamable HTTP: search, open a product, add to cart', async () => {
    daemon = await startServe({ db: path.join(scratchDir(), 'browsertask.db') });
    const client = await connectHTTP(daemon.url);
    try {
      await journey(client, shop);
    } finally {
      await client.close();
    }
    assert.deepEqual(shop.added(), ['Blue mug × 2']);
  });

  test('over stdio: search, open a product, add to cart', async () => {
    const client = await connectStdio({ db: path.join(scratchDir(), 'browsertask.db') });
    try {
      await journey(client, shop);
    } finally {
      await client.close();
    }
    assert.deepEqual(shop.added(), ['Blue mug × 2', 'Blue mug × 2']);
  });
});
