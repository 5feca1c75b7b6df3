// SPDX-License-Identifier: MIT
// palloc-report's page, pure part: the document decoded, profiles as trees,
// and what grew between two profiles with palloc-diff's noise rule
// (libcore/tools/diff.c diff_noise()). No DOM here: node's unit tests
// (web/test/growth.test.js) load this file as it is.
'use strict';
var PallocGrowth = (function () {
	// A delta-coded column (htmlreport_model.h) back to values.
	function decode(col) {
		var out = new Array(col.length), last = 0, have = false;
		for (var i = 0; i < col.length; i++) {
			var d = col[i];
			if (d === null) {
				out[i] = null;
				continue;
			}
			last = have ? last + d : d;
			have = true;
			out[i] = last;
		}
		return out;
	}

	// llround(z * sd) for sd >= 0 (diff.c margin()).
	function margin(z, sd) {
		return Math.round(z * sd);
	}

	// v moved toward 0 by m >= 0, and 0 when |v| <= m (diff.c shrink()).
	function shrink(v, m) {
		if (v > m)
			return v - m;
		if (v < -m)
			return v + m;
		return 0;
	}

	// Per stack: the summed value of column col (1 inuse_space, 2
	// inuse_objects) and the summed squares of its stddev label.
	function byStack(profile, col, into, sign) {
		var rows = profile.samples;
		for (var i = 0; i < rows.length; i++) {
			var r = rows[i], k = r[0], sd = r[col + 2];
			var e = into.get(k);
			if (!e) {
				e = { stack: k, base: 0, next: 0, variance: 0 };
				into.set(k, e);
			}
			if (sign < 0)
				e.base += r[col];
			else
				e.next += r[col];
			e.variance += sd * sd;
		}
	}

	function hasLabels(profile, col) {
		var rows = profile.samples;
		for (var i = 0; i < rows.length; i++)
			if (rows[i][col + 2] !== 0)
				return true;
		return false;
	}

	// NEW - BASE as palloc-diff computes it for one sample type: the
	// changed stacks (value, sigma, within noise) and the totals of
	// diff_noise(). z: palloc-diff's --noise-z (3 by default).
	function diff(base, next, z, col) {
		col = col || 1;
		var m = new Map(), stacks = [], growth = 0, variance = 0;
		var stackExcess = 0;
		var labels = hasLabels(base, col) || hasLabels(next, col);
		byStack(base, col, m, -1);
		byStack(next, col, m, 1);
		m.forEach(function (e) {
			var v = e.next - e.base;
			variance += e.variance;
			if (v === 0)
				return;
			var sd = labels ? Math.round(Math.sqrt(e.variance)) : 0;
			var mg = margin(z, sd);
			growth += v;
			stackExcess += shrink(v, mg);
			stacks.push({ stack: e.stack, value: v, stddev: sd,
				      variance: labels ? e.variance : 0,
				      within: Math.abs(v) <= mg });
		});
		var stddev = labels ? Math.sqrt(variance) : 0;
		var mt = margin(z, stddev);
		var totalExcess = growth - mt;
		stacks.sort(function (a, b) {
			return b.value - a.value || a.stack - b.stack;
		});
		return {
			growth: growth,
			stddev: stddev,
			within: growth >= -mt && growth <= mt,
			total_excess: totalExcess,
			stack_excess: stackExcess,
			significant: Math.max(totalExcess, stackExcess),
			has_stddev: labels,
			stacks: stacks
		};
	}

	function newNode(name) {
		return { name: name, value: 0, objects: 0, variance: 0,
			 kids: new Map(), children: [] };
	}

	// A flame graph tree ({name, value, children}, root first) of the
	// given rows: [stack, value, objects, variance].
	function tree(doc, rows, rootName) {
		var root = newNode(rootName);
		for (var i = 0; i < rows.length; i++) {
			var r = rows[i], st = doc.stacks[r[0]], n = root;
			n.value += r[1];
			n.objects += r[2];
			n.variance += r[3];
			for (var j = st.length - 1; j >= 0; j--) {
				var name = doc.frames[st[j]][0];
				var c = n.kids.get(name);
				if (!c) {
					c = newNode(name);
					n.kids.set(name, c);
					n.children.push(c);
				}
				c.value += r[1];
				c.objects += r[2];
				c.variance += r[3];
				n = c;
			}
		}
		(function strip(n) {
			delete n.kids;
			n.children.forEach(strip);
		})(root);
		return root;
	}

	// The in-use tree of a profile (stacks with inuse_space > 0).
	function profileTree(doc, profile) {
		var rows = [];
		profile.samples.forEach(function (r) {
			if (r[1] > 0)
				rows.push([r[0], r[1], r[2], r[3] * r[3]]);
		});
		return tree(doc, rows, 'all');
	}

	// The growth tree of a diff: the stacks that grew; each node marked
	// within noise when |value| <= z sigma of its summed variance.
	function growthTree(doc, d, z) {
		var rows = [];
		d.stacks.forEach(function (s) {
			if (s.value > 0)
				rows.push([s.stack, s.value, 0, s.variance]);
		});
		var root = tree(doc, rows, 'growth');
		(function mark(n) {
			n.within = d.has_stddev &&
				Math.abs(n.value) <=
					margin(z, Math.sqrt(n.variance));
			n.children.forEach(mark);
		})(root);
		return root;
	}

	function total(profile, col) {
		var s = 0;
		profile.samples.forEach(function (r) {
			s += r[col || 1];
		});
		return s;
	}

	return { decode: decode, diff: diff, tree: tree,
		 profileTree: profileTree, growthTree: growthTree,
		 total: total, margin: margin };
})();
if (typeof module !== 'undefined')
	module.exports = PallocGrowth;
