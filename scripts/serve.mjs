#!/usr/bin/env node
// A static file server with no dependencies, for the page and its browser
// tests. It serves one directory on 127.0.0.1 only, never outside it and
// never a dotfile in it (.git, .env: a 404), and sends Cache-Control:
// no-store so an edited file shows on the next reload,
// Access-Control-Allow-Origin: * so the embeddable element works from a
// page on another origin, and a Content-Security-Policy that lets no other
// site frame anything but embed.html.
//
//   node scripts/serve.mjs [dir] [port]     dir defaults to web/, port to
//                                           $PORT or 8000; 0 = any free port
//   import { startServer } from './scripts/serve.mjs';
//   const { url, port, close } = await startServer({ root, port: 0 });

import { createServer } from 'node:http';
import { createReadStream } from 'node:fs';
import { gzip as gzipCallback } from 'node:zlib';
import { readFile, realpath, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { extname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HOST = '127.0.0.1';
const DEFAULT_PORT = 8000;
// Room for a URL of about 64 KB plus ordinary headers.
export const MAX_HEADER_BYTES = 96 * 1024;

// A strict policy: nothing inline (styles are set through the CSSOM), no
// other origin; WebAssembly may compile; images may be data: and blob: URLs
// (the heatmaps' PNG downloads draw their SVG through one).
export const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; "
  + "style-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'";

// Added to the policy for every file but EMBED_PAGE, which courses frame:
// no other site may frame the page (clickjacking). frame-ancestors governs
// whatever a response becomes when it is framed (an HTML page, but an SVG
// or a text file opened in a frame is a document too) and is ignored for
// scripts, styles and the engine, so it goes with every file.
export const NO_FRAMING = "frame-ancestors 'none'";
export const EMBED_PAGE = 'embed.html';

// Content types worth compressing.
const COMPRESSIBLE = /^(text\/|application\/(json|wasm|javascript)|image\/svg)/;

export const MIME_TYPES = Object.freeze({
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
});

function send(response, status, text, method) {
  response.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
  });
  response.end(method === 'HEAD' ? undefined : `${text}\n`);
}

// The file a request names inside root, or null when it names nothing there.
// Symbolic links are followed only while they stay inside root.
async function fileFor(root, pathname) {
  let decoded;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || hasDotSegment(decoded.split('/'))) return null;
  let candidate = resolve(root, `.${decoded}`);
  if (candidate !== root && !candidate.startsWith(root + sep)) return null;
  try {
    let info = await stat(candidate);
    if (info.isDirectory()) {
      candidate = resolve(candidate, 'index.html');
      info = await stat(candidate);
    }
    if (!info.isFile()) return null;
    const real = await realpath(candidate);
    if (real !== root && !real.startsWith(root + sep)) return null;
    // A link with an ordinary name to a dotfile inside root.
    if (hasDotSegment(relative(root, real).split(sep))) return null;
    return { path: real, size: info.size, modified: info.mtimeMs };
  } catch {
    return null;
  }
}

// Dotfiles and dot folders are never served (a .git or .env in the root
// would be a leak); no file the page needs has such a name.
function hasDotSegment(segments) {
  return segments.some((segment) => segment.startsWith('.'));
}

// The path of a request target (origin form "/a?b" or absolute form
// "http://host/a"), or null when it cannot be parsed: "http://[",
// "http://:99999/", "http://%zz/" and the like.
export function pathnameOf(target) {
  try {
    return new URL(target, `http://${HOST}`).pathname;
  } catch {
    return null;
  }
}

// Every failure inside a request becomes a response (400 for a target that
// cannot be parsed, 500 otherwise), never an unhandled rejection that would
// stop the server.
function handler(root, policy) {
  return (request, response) => {
    serveFile(root, policy, request, response).catch(() => {
      try {
        if (!response.headersSent) send(response, 500, 'internal error', request.method);
        else response.destroy();
      } catch {
        response.destroy();
      }
    });
  };
}

async function serveFile(root, policy, request, response) {
  const { method } = request;
  if (method !== 'GET' && method !== 'HEAD') {
    response.setHeader('Allow', 'GET, HEAD');
    send(response, 405, 'method not allowed', method);
    return;
  }
  const pathname = pathnameOf(request.url);
  if (pathname === null) {
    send(response, 400, 'bad request: the request target is not a valid URL', method);
    return;
  }
  const file = await fileFor(root, pathname);
  if (!file) {
    send(response, 404, 'not found', method);
    return;
  }
  const type = MIME_TYPES[extname(file.path).toLowerCase()] ?? 'application/octet-stream';
  // Text and the engine shrink to a third or less; fonts are compressed already.
  const gzip = COMPRESSIBLE.test(type) && /\bgzip\b/.test(request.headers['accept-encoding'] ?? '');
  let packed;
  try {
    packed = gzip ? await gzipped(file) : null;
  } catch {
    send(response, 404, 'not found', method);
    return;
  }
  response.writeHead(200, {
    'Content-Type': type,
    // The custom element runs on other sites and fetches the engine, KaTeX
    // and its fonts from here: public files, readable from any origin.
    'Access-Control-Allow-Origin': '*',
    ...(gzip ? { 'Content-Encoding': 'gzip', 'Content-Length': packed.length } : { 'Content-Length': file.size }),
    Vary: 'Accept-Encoding',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(policy ? { 'Content-Security-Policy': policyFor(root, file.path, policy) } : {}),
  });
  if (method === 'HEAD') {
    response.end();
    return;
  }
  if (gzip) {
    response.end(packed);
    return;
  }
  const stream = createReadStream(file.path);
  stream.on('error', () => response.destroy());
  stream.pipe(response);
}

// The policy a file is sent with: embed.html in the root may be framed by
// any site, every other file by none.
function policyFor(root, path, policy) {
  return path === resolve(root, EMBED_PAGE) ? policy : `${policy}; ${NO_FRAMING}`;
}

// Each file's gzipped bytes, kept while the file is unchanged: the page
// asks for some twenty files at once on every load (no-store), and
// compressing them all again each time made them arrive one after another.
const gzipCache = new Map();
const gzipAsync = promisify(gzipCallback);

async function gzipped({ path, size, modified }) {
  const cached = gzipCache.get(path);
  if (cached && cached.size === size && cached.modified === modified) return cached.body;
  const body = await gzipAsync(await readFile(path));
  gzipCache.set(path, { size, modified, body });
  return body;
}

/**
 * Serves `root` on 127.0.0.1:`port` (0 = any free port). Resolves to
 * { server, port, url, close() } once it is listening.
 */
// contentSecurityPolicy: the policy sent with every file (and NO_FRAMING
// with every file but embed.html); null sends none (the browser tests'
// stand-ins for other sites, which have their own).
export async function startServer({ root = 'web', port = DEFAULT_PORT, contentSecurityPolicy = CONTENT_SECURITY_POLICY } = {}) {
  const rootPath = await realpath(resolve(root));
  if (!(await stat(rootPath)).isDirectory()) throw new Error(`serve: ${root} is not a directory`);
  // Addresses that hold the page's state (?v=...) can be long: headers up to
  // MAX_HEADER_BYTES, where Node's default would answer a bare 431 at 16 KB.
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, handler(rootPath, contentSecurityPolicy));
  // A request Node's parser rejects (a header section larger still, a
  // malformed request line) gets a response that says so, then the socket
  // closes; the server stays up.
  server.on('clientError', (error, socket) => {
    if (!socket.writable || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const text = tooLarge
      ? `the request line and headers exceed ${MAX_HEADER_BYTES} bytes; use a shorter URL\n`
      : 'bad request: the request could not be parsed\n';
    socket.end(`HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\n`
      + `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  });
  await new Promise((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(port, HOST, () => {
      server.off('error', rejectListen);
      resolveListen();
    });
  });
  const actualPort = server.address().port;
  return {
    server,
    port: actualPort,
    url: `http://${HOST}:${actualPort}/`,
    close: () => new Promise((resolveClose) => {
      server.closeAllConnections?.();
      server.close(() => resolveClose());
    }),
  };
}

function parsePort(text) {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`serve: the port must be an integer from 0 to 65535, got "${text}"`);
  }
  return port;
}

async function main(argv) {
  const [root = 'web', portText = process.env.PORT ?? String(DEFAULT_PORT)] = argv;
  const { url } = await startServer({ root, port: parsePort(portText) });
  console.log(`Serving ${root} at ${url}  (Ctrl+C to stop)`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(error.message);
    process.exitCode = 1;
  });
}
