// A local page server for the browser template (never the internet):
// /page/N is a small product page, answered after ?delay=ms. fetchCount(path)
// tells how many requests a path (without query) has had.
import http from 'node:http';

export async function startFixture() {
  const fetches = new Map();
  const server = http.createServer((req, res) => {
    const u = new URL(req.url, 'http://fixture');
    fetches.set(u.pathname, (fetches.get(u.pathname) ?? 0) + 1);
    const m = /^\/page\/(\d+)$/.exec(u.pathname);
    if (!m) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const n = Number(m[1]);
    const delay = Math.min(Number(u.searchParams.get('delay') ?? 0), 10000);
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="en"><head><title>Page ${n}</title>` +
        `<meta name="description" content="Description of page ${n}"></head>` +
        `<body><h1 id="name">Item ${n}</h1><span class="price">${n}.00</span></body></html>`);
    }, delay);
  });
  await new Promise(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: (p) => `http://127.0.0.1:${port}${p}`,
    fetchCount: (p) => fetches.get(p) ?? 0,
    fetchCounts: () => new Map(fetches),
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(resolve); }),
  };
}
