// scripts/serve.mjs stays up whatever a client sends: request targets it
// cannot parse get a 400 over the same raw socket a browser would use, long
// addresses are served, and a good request still succeeds afterwards. It
// serves no dotfile, and lets other sites frame embed.html only.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, pathnameOf, CONTENT_SECURITY_POLICY, MAX_HEADER_BYTES } from '../../scripts/serve.mjs';

let dir;
let server;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-serve-hard-'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>root</title>');
  await writeFile(join(dir, 'embed.html'), '<!doctype html><title>embed</title>');
  await writeFile(join(dir, 'figure.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(join(dir, '.env'), 'SECRET=1');
  await mkdir(join(dir, '.git'));
  await writeFile(join(dir, '.git', 'config'), '[core]');
  await mkdir(join(dir, 'sub', '.hidden'), { recursive: true });
  await writeFile(join(dir, 'sub', '.hidden', 'page.html'), '<!doctype html><title>hidden</title>');
  await writeFile(join(dir, 'sub', 'embed.html'), '<!doctype html><title>not the embed</title>');
  await symlink(join(dir, '.env'), join(dir, 'env.txt'));
  server = await startServer({ root: dir, port: 0 });
});

after(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

// Sends `text` as is over a new TCP connection; resolves to the status code
// and body of the response, read until the server closes the connection.
function raw(text) {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, '127.0.0.1');
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk) => { received += chunk; });
    socket.on('error', reject);
    socket.on('close', () => {
      const match = /^HTTP\/1\.1 (\d{3})/.exec(received);
      resolve({ status: match ? Number(match[1]) : null, body: received.split('\r\n\r\n').slice(1).join('\r\n\r\n'), received });
    });
    socket.write(text);
  });
}

const request = (target) => raw(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);

test('request targets that are not valid URLs get a 400 and the server keeps serving', async () => {
  for (const target of ['http://[', 'http://:99999/', 'http://%zz/', 'http://x:-1/', 'http://[::1/x']) {
    const response = await request(target);
    assert.equal(response.status, 400, `${target}: ${response.received}`);
    assert.match(response.body, /bad request/, target);
  }
  const good = await request('/');
  assert.equal(good.status, 200);
  assert.match(good.body, /<title>root<\/title>/);
});

test('an absolute-form target that parses is served like its path', async () => {
  const response = await request('http://127.0.0.1/index.html');
  assert.equal(response.status, 200);
  assert.match(response.body, /<title>root<\/title>/);
});

test('pathnameOf reads the path of a target, or null when it cannot', () => {
  assert.equal(pathnameOf('/a/b?c=1'), '/a/b');
  assert.equal(pathnameOf('http://example.org/x/y'), '/x/y');
  assert.equal(pathnameOf('http://[') , null);
  assert.equal(pathnameOf('http://:99999/'), null);
});

test('a request line Node cannot parse gets a 400, not a dropped connection', async () => {
  const response = await raw('GET / HTTP/1.1 junk\r\n\r\n');
  assert.equal(response.status, 400, response.received);
  const good = await request('/');
  assert.equal(good.status, 200);
});

test('a URL of 64 KB is served, not refused with a bare 431', async () => {
  const target = `/index.html?v=${'a'.repeat(64 * 1024)}`;
  const response = await request(target);
  assert.equal(response.status, 200);
  assert.match(response.body, /<title>root<\/title>/);
});

test('a header section beyond the limit gets a 431 that says what to do', async () => {
  const response = await request(`/?v=${'a'.repeat(MAX_HEADER_BYTES + 1024)}`);
  assert.equal(response.status, 431, response.received.slice(0, 200));
  assert.match(response.body, new RegExp(`exceed ${MAX_HEADER_BYTES} bytes; use a shorter URL`));
  assert.equal((await request('/')).status, 200);
});

// The headers of a response to `target`, by name in lower case.
async function headersOf(target) {
  const { received, status } = await request(target);
  const head = received.split('\r\n\r\n')[0].split('\r\n').slice(1);
  return { status, headers: Object.fromEntries(head.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()])) };
}

test('dotfiles and anything in a dot folder are not found, however the path is spelled', async () => {
  for (const target of ['/.env', '/.git/config', '/.git/', '/sub/.hidden/page.html', '/%2eenv', '/%2Egit/config',
                        '/sub/%2ehidden/page.html', '/env.txt']) {
    const response = await request(target);
    assert.equal(response.status, 404, `${target}: ${response.received.slice(0, 80)}`);
    assert.doesNotMatch(response.body, /SECRET|\[core\]|hidden/, target);
  }
  assert.equal((await request('/index.html')).status, 200);
});

test('every file but embed.html is sent with frame-ancestors \'none\'; embed.html may be framed by any site', async () => {
  for (const target of ['/', '/index.html', '/figure.svg', '/sub/embed.html']) {
    const { status, headers } = await headersOf(target);
    assert.equal(status, 200, target);
    assert.equal(headers['content-security-policy'], `${CONTENT_SECURITY_POLICY}; frame-ancestors 'none'`, target);
  }
  const embed = await headersOf('/embed.html?widget=masks');
  assert.equal(embed.status, 200);
  assert.equal(embed.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.doesNotMatch(embed.headers['content-security-policy'], /frame-ancestors/);
});
