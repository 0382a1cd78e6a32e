// SPDX-License-Identifier: MIT
// Ajv, the most used JSON Schema validator, in its strictest mode over tlbprof's schemas: every schema and every
// one of its $defs must compile, and each document given must validate against the schema URI named beside it.
//
//   node ajv_check.js SCHEMA.json... [-- URI=DOC.json...]
//
// URI is a schema's $id, optionally with a fragment (urn:tlbprof:schema:report:1#/$defs/written). Prints one
// line per failure ("FAIL: ...") and a summary; exits 0 when all passed, 1 when one failed, 2 on bad usage.
// Ajv comes from tools/node/node_modules (tools/bootstrap installs it from tools/node-packages.json) or NODE_PATH.
'use strict';
const fs = require('fs');
const path = require('path');

function load(name) {
	const local = path.join(__dirname, '..', '..', 'tools', 'node', 'node_modules', name);
	try {
		return require(local);
	} catch (e) {
		return require(name);       // NODE_PATH
	}
}

let Ajv2020, addFormats;
try {
	Ajv2020 = load('ajv/dist/2020').default;
	addFormats = load('ajv-formats');
} catch (e) {
	console.error('FAIL: Ajv is missing: run tools/bootstrap --test (it installs ajv and ajv-formats into tools/node/)');
	process.exit(1);
}

const args = process.argv.slice(2);
const sep = args.indexOf('--');
const schemaFiles = sep < 0 ? args : args.slice(0, sep);
const docs = sep < 0 ? [] : args.slice(sep + 1);
if (schemaFiles.length === 0) {
	console.error('usage: ajv_check.js SCHEMA.json... [-- URI=DOC.json...]');
	process.exit(2);
}

// strict: true turns every strict option on: unknown keywords and formats, keywords without their type
// (strictTypes), union types, tuples without bounds, required names not defined beside them (strictRequired).
const ajv = new Ajv2020({strict: true, allErrors: true});
addFormats(ajv);
let failures = 0;
const fail = (msg) => {
	failures++;
	console.error('FAIL: ' + msg);
};

const ids = [];
for (const file of schemaFiles) {
	const schema = JSON.parse(fs.readFileSync(file, 'utf8'));
	if (typeof schema.$id !== 'string' || schema.$id === '') {
		fail(`${path.basename(file)}: no $id`);
		continue;
	}
	try {
		ajv.addSchema(schema);
		ids.push([file, schema]);
	} catch (e) {
		fail(`${path.basename(file)}: ${e.message}`);
	}
}
// Compiled only after all are added, so that one schema may refer to another by its $id.
let compiled = 0;
const broken = new Set();
for (const [file, schema] of ids) {
	for (const frag of [''].concat(Object.keys(schema.$defs || {}).map((k) => '#/$defs/' + k))) {
		try {
			ajv.getSchema(schema.$id + frag);
			compiled++;
		} catch (e) {
			fail(`${path.basename(file)}${frag}: does not compile in strict mode: ${e.message}`);
			broken.add(schema.$id);
			break;      // the rest would repeat the same message
		}
	}
}

for (const arg of docs) {
	const eq = arg.lastIndexOf('=');
	if (eq < 0) {
		console.error(`usage: ${arg}: not URI=DOC.json`);
		process.exit(2);
	}
	const uri = arg.slice(0, eq), file = arg.slice(eq + 1);
	if (broken.has(uri.split('#')[0]))
		continue;
	let validate;
	try {
		validate = ajv.getSchema(uri);
	} catch (e) {
		fail(`${uri}: ${e.message}`);
		continue;
	}
	if (!validate) {
		fail(`${uri}: no such schema`);
		continue;
	}
	const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
	if (!validate(doc)) {
		const errs = validate.errors.slice(0, 5).map((e) => `${e.instancePath || '(top)'} ${e.message}`);
		fail(`${path.basename(file)} against ${uri}: ${validate.errors.length} errors: ${errs.join('; ')}`);
	}
}
console.log(failures ? `${failures} failed` :
	`ajv: ${compiled} schemas and definitions compiled in strict mode, ${docs.length} documents valid`);
process.exit(failures ? 1 : 0);
