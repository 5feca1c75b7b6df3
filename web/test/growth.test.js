// SPDX-License-Identifier: MIT
// Unit tests of the page's pure part (web/src/growth.js), with node's test
// runner:
//   node --test web/test/growth.test.js
// runs the cases below; with PALLOC_GROWTH_CASES=FILE (t/6002) also the
// cases of FILE, one per line: "REPORT.html A B DIFF.json", where DIFF.json
// is `palloc-diff --json A B` and A and B are paths of profiles in the
// report: the page's growth between them must be palloc-diff's.
'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const path = require('path');
const G = require(path.join(__dirname, '..', 'src', 'growth.js'));

test('decode: delta-coded columns with nulls', () => {
	assert.deepStrictEqual(G.decode([5, 2, null, -3, 0]),
			       [5, 7, null, 4, 4]);
	assert.deepStrictEqual(G.decode([null, 10, 1]), [null, 10, 11]);
	assert.deepStrictEqual(G.decode([]), []);
});

// [stack, inuse_space, inuse_objects, space_stddev, objects_stddev]
const base = { samples: [[0, 1000, 1, 300, 1], [1, 500, 1, 0, 0],
			 [2, 4000, 4, 400, 2]] };
const next = { samples: [[0, 9000, 9, 900, 3], [1, 500, 1, 0, 0],
			 [3, 100, 1, 40, 1], [2, 3900, 4, 400, 2]] };

test('diff: growth, noise and the significant growth', () => {
	const d = G.diff(base, next, 3, 1);
	assert.strictEqual(d.growth, 8000 + 100 - 100);
	// total variance: every sample of both, unchanged stacks included
	const v = 300 ** 2 + 400 ** 2 + 900 ** 2 + 40 ** 2 + 400 ** 2;
	assert.strictEqual(d.stddev, Math.sqrt(v));
	assert.strictEqual(d.total_excess, 8000 - Math.round(3 * Math.sqrt(v)));
	// stack 0: 8000 - 3 * round(sqrt(300^2 + 900^2)) = 8000 - 2847;
	// stack 3: 100 within 3 * 40; stack 2: -100 within 3 * 566
	assert.strictEqual(d.stack_excess, 8000 - 3 * 949);
	assert.strictEqual(d.significant, Math.max(d.total_excess,
						   d.stack_excess));
	assert.strictEqual(d.within, false);
	assert.deepStrictEqual(d.stacks.map((s) => [s.stack, s.within]),
			       [[0, false], [3, true], [2, true]]);
});

test('diff: exact profiles (no stddev) have no noise', () => {
	const a = { samples: [[0, 10, 1, 0, 0]] };
	const b = { samples: [[0, 25, 2, 0, 0]] };
	const d = G.diff(a, b, 3, 1);
	assert.deepStrictEqual([d.growth, d.stddev, d.significant, d.within,
				d.has_stddev], [15, 0, 15, false, false]);
});

test('trees: root first, values summed, growth marked within noise', () => {
	const doc = { frames: [['leaf'], ['main'], ['other']],
		      stacks: [[0, 1], [2, 1], [0, 1], [2, 1]] };
	const t = G.profileTree(doc, next);
	assert.strictEqual(t.value, 13500);
	assert.strictEqual(t.children[0].name, 'main');
	assert.strictEqual(t.children[0].value, 13500);
	const g = G.growthTree(doc, G.diff(base, next, 3, 1), 3);
	assert.strictEqual(g.value, 8100);
	assert.strictEqual(g.within, false);
});

// Against palloc-diff on real profiles (t/6002-report-growth.sh).
const cases = process.env.PALLOC_GROWTH_CASES;
if (cases) {
	const lines = fs.readFileSync(cases, 'utf8').split('\n')
		.filter((l) => l.trim());
	for (const line of lines) {
		const [html, a, b, json] = line.split(' ');
		test('as palloc-diff: ' + a + ' -> ' + b, () => {
			const s = fs.readFileSync(html, 'utf8');
			const m = s.match(/<script type="application\/json" id="palloc-data">([^<]*)<\/script>/);
			assert.ok(m, 'the page has its data');
			const doc = JSON.parse(m[1]);
			const pa = doc.profiles.find((p) => p.path.endsWith(a));
			const pb = doc.profiles.find((p) => p.path.endsWith(b));
			assert.ok(pa && pb, 'both profiles are in the page');
			const want = JSON.parse(fs.readFileSync(json, 'utf8'));
			const d = G.diff(pa, pb, want.noise_z, 1);
			assert.strictEqual(d.growth, want.growth_bytes);
			assert.strictEqual(Math.round(d.stddev),
					   want.growth_stddev_bytes);
			assert.strictEqual(d.within, want.growth_within_noise);
			assert.strictEqual(d.significant,
					   want.significant_growth_bytes);
			if (want.functions.length &&
			    want.functions[0].flat_bytes > 0)
				assert.strictEqual(doc.frames[doc.stacks[
					d.stacks[0].stack][0]][0],
					want.functions[0].function);
		});
	}
}
