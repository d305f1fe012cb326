#!/usr/bin/env node
// SPDX-License-Identifier: Apache-2.0
// A CRI client for the tests: one call of the runtime service over a
// unix socket, the request as JSON, the reply as JSON on stdout.
//
//   node tests/cri/cri.js SOCKET METHOD '{"config": {...}}'
//
// METHOD is a RuntimeService method of tests/cri/cri.proto (RunPodSandbox,
// CreateContainer, ExecSync, ...). A failed call prints one line, "METHOD:
// the gRPC status's message", on stderr and exits 1. Needs the modules
// of tests/cri/package.json (npm ci --prefix tests/cri).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const loader = require('@grpc/proto-loader');

// Bytes fields (ExecSync's stdout and stderr) print as UTF-8 text.
function bytesAsText(key, value) {
  if (value && value.type === 'Buffer' && Array.isArray(value.data))
    return Buffer.from(value.data).toString('utf8');
  return value;
}

function main(argv) {
  if (argv.length < 2 || argv.length > 3) {
    process.stderr.write('usage: cri.js SOCKET METHOD [JSON]\n');
    return process.exit(2);
  }
  const [socket, method, json = '{}'] = argv;
  let request;
  try {
    request = JSON.parse(json);
  } catch (e) {
    process.stderr.write(`${method}: request is not JSON: ${e.message}\n`);
    return process.exit(2);
  }
  const def = loader.loadSync(path.join(__dirname, 'cri.proto'), {
    keepCase: true, longs: Number, enums: String, defaults: true,
  });
  const api = grpc.loadPackageDefinition(def).runtime.v1;
  const client = new api.RuntimeService(`unix://${socket}`, grpc.credentials.createInsecure());
  if (typeof client[method] !== 'function') {
    process.stderr.write(`${method}: no such RuntimeService method in cri.proto\n`);
    return process.exit(2);
  }
  const deadline = new Date(Date.now() + 120 * 1000);
  client[method](request, { deadline }, (err, reply) => {
    if (err) {
      process.stderr.write(`${method}: ${err.details || err.message}\n`);
      process.exit(1);
    }
    process.stdout.write(JSON.stringify(reply, bytesAsText) + '\n');
    client.close();
  });
}

main(process.argv.slice(2));
