// scripts/serve.mjs stays up whatever a client sends: request targets it
// cannot parse get a 400 over the same raw socket a browser would use, long
// addresses are served, and a good request still succeeds afterwards.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, pathnameOf, MAX_HEADER_BYTES } from '../../scripts/serve.mjs';

let dir;
let server;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'aw-serve-hard-'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>root</title>');
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
