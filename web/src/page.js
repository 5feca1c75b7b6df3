// SPDX-License-Identifier: MIT
// palloc-report's page: reads the document in #palloc-data and draws, per
// process (largest first), the layers over time (uPlot), the in-use flame
// graphs at the peak and at the end (d3-flame-graph), what grew between
// two moments, and the account of the resident memory at the end.
'use strict';
(function () {
	var G = PallocGrowth;
	var Z = 3; // palloc-diff's default --noise-z
	var doc = JSON.parse(document.getElementById('palloc-data').textContent);
	var app = document.getElementById('app');
	var charts = []; // flame graphs, for the search box

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		for (var k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = text;
		return e;
	}

	// Sizes as palloc's commands print them for people (cli_human()).
	function human(b) {
		if (b === null || b === undefined || isNaN(b))
			return '-';
		var neg = b < 0, v = Math.abs(b), u = ['B', 'KiB', 'MiB',
			'GiB', 'TiB'], i = 0;
		while (v >= 1024 && i < u.length - 1) {
			v /= 1024;
			i++;
		}
		var s = i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1);
		return (neg ? '-' : '') + s + ' ' + u[i];
	}

	function clock(ms) {
		var d = new Date(doc.t0_ns / 1e6 + ms);
		return d.toISOString().slice(11, 23);
	}

	// The layers of one process, bottom first: each sample's parts of
	// its resident memory.
	var LAYERS = [
		{ key: 'heap', label: 'heap in use', color: '#d9534f' },
		{ key: 'free', label: 'allocator free/retained',
		  color: '#f0ad4e' },
		{ key: 'anon', label: 'other anonymous', color: '#5bc0de' },
		{ key: 'file', label: 'file', color: '#5cb85c' },
		{ key: 'shmem', label: 'shmem', color: '#9b59b6' }
	];
	var EVENT_COLORS = { profile: '#888', exec: '#337ab7',
		fork: '#337ab7', exit: '#000', oom_kill: '#c00',
		threshold: '#e67e22' };

	function columns(p) {
		var c = {};
		doc.fields.forEach(function (f) {
			c[f] = G.decode(p.cols[f]);
		});
		c.t = G.decode(p.t_ms);
		return c;
	}

	function layers(c) {
		var n = c.t.length, out = {};
		LAYERS.forEach(function (l) {
			out[l.key] = new Array(n);
		});
		for (var i = 0; i < n; i++) {
			var rss = c.rss_bytes[i], heap = c.heap_inuse_bytes[i] || 0;
			var free = c.allocator_free_bytes[i] || 0;
			var file = c.file_bytes[i], shmem = c.shmem_bytes[i];
			var anon = c.anon_bytes[i];
			if (rss === null && anon === null) {
				out.heap[i] = c.heap_inuse_bytes[i];
				out.free[i] = c.allocator_free_bytes[i];
				out.anon[i] = out.file[i] = out.shmem[i] = null;
				continue;
			}
			if (anon === null)
				anon = rss - (file || 0) - (shmem || 0);
			out.heap[i] = heap;
			out.free[i] = free;
			out.anon[i] = Math.max(0, anon - heap - free);
			out.file[i] = file || 0;
			out.shmem[i] = shmem || 0;
		}
		return out;
	}

	// uPlot draws no stacks of its own: the series are the running sums,
	// drawn top layer first so each lower one paints over the one above.
	function timelineChart(box, p, c, width) {
		var L = layers(c), n = c.t.length, xs = new Array(n);
		for (var i = 0; i < n; i++)
			xs[i] = doc.t0_ns / 1e9 + c.t[i] / 1000;
		var sums = [], acc = new Array(n).fill(0);
		LAYERS.forEach(function (l) {
			acc = acc.map(function (a, i) {
				return L[l.key][i] === null ? a : a + L[l.key][i];
			});
			sums.push(acc.slice());
		});
		var data = [xs], series = [{}];
		for (var k = LAYERS.length - 1; k >= 0; k--) {
			(function (l) {
				data.push(sums[k]);
				series.push({
					label: l.label, stroke: l.color,
					fill: l.color + 'cc', width: 1,
					value: function (u, v, si, idx) {
						return idx === null ? '-' :
							human(L[l.key][idx]);
					}
				});
			})(LAYERS[k]);
		}
		var hasCg = c.cgroup_usage_bytes.some(function (v) {
			return v !== null;
		});
		var hasLim = c.cgroup_limit_bytes.some(function (v) {
			return v !== null;
		});
		if (hasCg) {
			data.push(c.cgroup_usage_bytes);
			series.push({ label: 'cgroup usage', stroke: '#333',
				      width: 1.5, dash: [4, 2],
				      value: function (u, v) {
					      return human(v);
				      } });
		}
		if (hasLim) {
			data.push(c.cgroup_limit_bytes);
			series.push({ label: 'cgroup limit', stroke: '#c00',
				      width: 2, value: function (u, v) {
					      return human(v);
				      } });
		}
		var events = p.events.filter(function (e) {
			return e.event !== 'profile' || e.kind !== 'interval';
		});
		var marks = {
			hooks: { draw: [function (u) {
				var ctx = u.ctx, b = u.bbox;
				ctx.save();
				events.forEach(function (e) {
					var x = u.valToPos(doc.t0_ns / 1e9 +
						e.t_ms / 1000, 'x', true);
					ctx.strokeStyle = EVENT_COLORS[e.event] ||
						'#555';
					ctx.lineWidth = 1.5 * devicePixelRatio;
					ctx.setLineDash(e.event === 'profile' ?
						[3, 3] : []);
					ctx.beginPath();
					ctx.moveTo(x, b.top);
					ctx.lineTo(x, b.top + b.height);
					ctx.stroke();
				});
				ctx.restore();
			}] }
		};
		var opts = {
			width: width, height: 300, series: series,
			scales: { x: { time: true } },
			axes: [{}, { size: 85, values: function (u, vals) {
				return vals.map(human);
			} }],
			plugins: [marks]
		};
		return new uPlot(opts, data, box);
	}

	function flame(box, root, width, within) {
		var chart = flamegraph().width(width).cellHeight(18)
			.minFrameSize(2).transitionDuration(250).sort(true)
			.label(function (d) {
				var v = d.data.value, t = root.value || 1;
				var s = d.data.name + '\n' + human(v);
				if (!within)
					s += ' in use, ' + d.data.objects +
						' objects';
				s += ', ' + (100 * v / t).toFixed(1) +
					'% of ' + human(root.value);
				if (within && d.data.within)
					s += '\nwithin sampling noise';
				return s;
			});
		if (within)
			chart.setColorMapper(function (d, orig) {
				return d.data.within ? '#bbb' : orig;
			});
		d3.select(box).datum(root).call(chart);
		// The library sets the frames' widths and names in
		// transitions that end on later frames: set now too, so the
		// page is whole at once (a screenshot, a DOM dump).
		box.querySelectorAll('g.frame').forEach(function (g) {
			var div = g.querySelector('foreignObject div');
			var rect = g.querySelector('rect');
			if (div && !div.textContent)
				div.textContent = g.getAttribute('name');
			if (rect && !rect.getAttribute('width'))
				rect.setAttribute('width', g.getAttribute('width'));
		});
		charts.push(chart);
		return chart;
	}

	function profilesOf(p) {
		return doc.profiles.filter(function (q) {
			return q.pid === p.pid || (q.pid === null &&
				doc.processes.length === 1);
		});
	}

	function lastOf(list, kinds) {
		for (var i = list.length - 1; i >= 0; i--)
			if (kinds.indexOf(list[i].kind) >= 0)
				return list[i];
		return null;
	}

	function when(q) {
		return (q.t_ms === null ? '?' : clock(q.t_ms)) + ' ' + q.kind +
			' (' + human(G.total(q)) + ')';
	}

	function growthSection(sec, p, list, width) {
		var moments = list.filter(function (q) {
			return q.kind !== 'peak';
		});
		if (moments.length < 2)
			return;
		sec.appendChild(el('h3', {}, 'What grew between two moments'));
		var form = el('p', { class: 'pick' });
		var a = el('select', { class: 'moment-a' });
		var b = el('select', { class: 'moment-b' });
		moments.forEach(function (q, i) {
			a.appendChild(el('option', { value: i }, when(q)));
			b.appendChild(el('option', { value: i }, when(q)));
		});
		a.value = 0;
		b.value = moments.length - 1;
		form.appendChild(document.createTextNode('from '));
		form.appendChild(a);
		form.appendChild(document.createTextNode(' to '));
		form.appendChild(b);
		sec.appendChild(form);
		var summary = el('p', { class: 'growth-summary' });
		sec.appendChild(summary);
		var box = el('div', { class: 'flame growth' });
		sec.appendChild(box);
		var table = el('table', { class: 'growth-stacks' });
		sec.appendChild(table);
		var chart = null;
		function update() {
			var qa = moments[a.value], qb = moments[b.value];
			var d = G.diff(qa, qb, Z, 1);
			summary.textContent = 'grew by ' + human(d.growth) +
				(d.has_stddev ? ' (sampling noise \u00b1' +
				 human(Z * d.stddev) + ' at ' + Z +
				 ' sigma; beyond it: ' +
				 human(d.significant) + ')' : ' (exact)') +
				(d.within ? ': within sampling noise' : '');
			var root = G.growthTree(doc, d, Z);
			box.textContent = '';
			if (chart) {
				charts.splice(charts.indexOf(chart), 1);
				chart.destroy();
			}
			chart = root.value > 0 ? flame(box, root, width, true) :
				null;
			table.textContent = '';
			var head = el('tr');
			['change', '\u00b1' + Z + ' sigma', 'stack (leaf first)']
				.forEach(function (h) {
					head.appendChild(el('th', {}, h));
				});
			table.appendChild(head);
			d.stacks.slice(0, 10).forEach(function (s) {
				var tr = el('tr', s.within ?
					{ class: 'noise' } : {});
				tr.appendChild(el('td', {}, (s.value > 0 ?
					'+' : '') + human(s.value) +
					(s.within ? ' ~' : '')));
				tr.appendChild(el('td', {},
					human(Z * s.stddev)));
				tr.appendChild(el('td', {},
					doc.stacks[s.stack].slice(0, 6)
						.map(function (f) {
							return doc.frames[f][0];
						}).join(' < ')));
				table.appendChild(tr);
			});
		}
		a.onchange = b.onchange = update;
		update();
	}

	// palloc-explain's account of the resident memory, from the last
	// sample and the last profile.
	function waterfall(sec, c, end) {
		var i = c.t.length - 1;
		while (i >= 0 && c.rss_bytes[i] === null)
			i--;
		if (i < 0)
			return;
		var rss = c.rss_bytes[i];
		// the sample's own estimate, of the same moment as the
		// kernel's figures; the last profile's total without it
		var heap = c.heap_inuse_bytes[i];
		var fromProfile = heap === null && end;
		if (fromProfile)
			heap = G.total(end);
		var free = c.allocator_free_bytes[i];
		var res = c.allocator_resident_bytes[i];
		var anon = c.anon_bytes[i], file = c.file_bytes[i];
		var shmem = c.shmem_bytes[i];
		var parts = [['profile', 'heap in use (' + (fromProfile ?
			'last profile' : 'timeline') + ')', heap]];
		parts.push(['allocator', 'allocator free/retained', free]);
		if (res !== null && heap !== null)
			parts.push(['allocator', 'allocator overhead',
				    Math.max(0, res - heap - (free || 0))]);
		if (anon !== null)
			parts.push(['kernel', 'anonymous, not the allocator\'s',
				    Math.max(0, anon - (res !== null ? res :
					(heap || 0) + (free || 0)))]);
		parts.push(['kernel', 'file', file]);
		parts.push(['kernel', 'shmem', shmem]);
		var sum = 0;
		parts.forEach(function (p) {
			sum += p[2] || 0;
		});
		parts.push(['unexplained', 'unexplained', rss - sum]);
		sec.appendChild(el('h3', {}, 'Resident memory at the end: ' +
			human(rss) + ' (' + clock(c.t[i]) + ')'));
		var t = el('table', { class: 'waterfall' });
		var at = 0;
		parts.forEach(function (p) {
			var tr = el('tr', { class: 'layer-' + p[0] });
			tr.appendChild(el('td', {}, p[1]));
			tr.appendChild(el('td', { class: 'num' }, human(p[2])));
			var bar = el('td', { class: 'bar' });
			var v = p[2] || 0, x0 = Math.min(at, at + v);
			var span = el('span');
			span.style.marginLeft = (100 * x0 / rss).toFixed(2) + '%';
			span.style.width = (100 * Math.abs(v) / rss).toFixed(2) +
				'%';
			bar.appendChild(span);
			tr.appendChild(bar);
			at += v;
			t.appendChild(tr);
		});
		sec.appendChild(t);
	}

	function process(p) {
		var sec = el('section', { class: 'process', 'data-pid': p.pid });
		var c = columns(p);
		var peakRss = c.rss_bytes.reduce(function (m, v) {
			return v > m ? v : m;
		}, 0);
		sec.setAttribute('data-peak-rss', peakRss);
		sec.appendChild(el('h2', {}, 'pid ' + p.pid + ': peak rss ' +
			human(peakRss)));
		app.appendChild(sec);
		var width = Math.max(600, Math.min(1400,
			app.clientWidth - 40));
		if (c.t.length) {
			var box = el('div', { class: 'timeline' });
			sec.appendChild(box);
			timelineChart(box, p, c, width);
			var ev = p.events.filter(function (e) {
				return e.event !== 'profile';
			});
			if (ev.length) {
				var ul = el('ul', { class: 'events' });
				ev.forEach(function (e) {
					var extra = Object.keys(e).filter(function (k) {
						return ['pid', 'time_ns', 't_ms',
							'event'].indexOf(k) < 0;
					}).map(function (k) {
						return k + ' ' + JSON.stringify(e[k]);
					}).join(', ');
					ul.appendChild(el('li', { class: 'event-' +
						e.event }, clock(e.t_ms) + ' ' +
						e.event + (extra ? ': ' + extra : '')));
				});
				sec.appendChild(ul);
			}
		}
		var list = profilesOf(p);
		var end = lastOf(list, ['exit']) || list[list.length - 1] || null;
		var peak = lastOf(list, ['peak']);
		[[peak, 'at the peak'], [end, 'at the end']].forEach(function (x) {
			if (!x[0])
				return;
			var tr = G.profileTree(doc, x[0]);
			sec.appendChild(el('h3', {}, 'In use ' + x[1] + ': ' +
				human(tr.value) + ' (' + when(x[0]) + ')'));
			var box = el('div', { class: 'flame inuse' });
			sec.appendChild(box);
			if (tr.value > 0)
				flame(box, tr, width, false);
		});
		growthSection(sec, p, list, width);
		if (c.t.length)
			waterfall(sec, c, end);
	}

	document.getElementById('noscript').remove();
	var bar = el('p', { class: 'search' });
	var input = el('input', { type: 'search', id: 'search',
		placeholder: 'search functions (flame graphs)' });
	input.oninput = function () {
		charts.forEach(function (ch) {
			if (input.value)
				ch.search(input.value);
			else
				ch.clear();
		});
	};
	bar.appendChild(input);
	app.appendChild(bar);
	app.appendChild(el('p', { class: 'source' }, 'Timeline ' +
		(doc.timeline || '-') + ', ' + doc.processes.length +
		' process(es), ' + doc.profiles.length + ' profile(s). Flame ' +
		'graphs: click to zoom, hover for bytes, objects and share.'));
	doc.processes.forEach(process);
	document.body.setAttribute('data-rendered', 'yes');
})();
