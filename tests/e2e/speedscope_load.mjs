// ljlog e2e: open a file in speedscope's own app (the npm package's built
// release, served from 127.0.0.1) in headless Chromium, the way speedscope
// loads a URL (#profileURL=...), and walk its profiles in the sandwich view.
// Usage: node speedscope_load.mjs TOOLS_DIR FILE
// Prints JSON: {"profiles": [{"name", "index", "count", "symbols": [...]}],
// "problems": [...]}: problems are console errors and warnings (but
// Chromium's own GL driver notes), page errors, dialogs (speedscope alerts
// on an import error) and speedscope's "Something went wrong". Exit 0 when
// it could run (the caller judges the result), 2 when it could not.
import { createRequire } from 'module';
import fs from 'fs';
import http from 'http';
import path from 'path';

const [tools, file] = process.argv.slice(2);
if (!tools || !file) {
	console.error('usage: node speedscope_load.mjs TOOLS_DIR FILE');
	process.exit(2);
}
const require = createRequire(path.join(tools, 'node_modules') + '/');
const { chromium } = require('playwright-core');
const dist = path.join(tools, 'node_modules/speedscope/dist/release');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

const server = http.createServer((req, res) => {
	const u = decodeURIComponent(req.url.split('?')[0]);
	const p = u === '/profile.json' ? file
		: path.join(dist, path.normalize(u === '/' ? '/index.html' : u));
	fs.readFile(p, (e, d) => {
		if (e) {
			res.writeHead(404);
			res.end();
			return;
		}
		res.writeHead(200);
		res.end(d);
	});
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const port = server.address().port;

const problems = [];
const browser = await chromium.launch({ executablePath: chromiumPath,
	args: ['--no-sandbox'] });
const out = { profiles: [], problems };
try {
	const page = await browser.newPage({ viewport: { width: 1600, height: 2400 } });
	page.on('console', (m) => {
		const t = m.type();
		if (t !== 'error' && t !== 'warning')
			return;
		// Chromium's software GL notes, not speedscope's.
		if (/GL Driver Message|^\[\.WebGL-/.test(m.text()))
			return;
		problems.push(`console ${t}: ${m.text()}`);
	});
	page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
	page.on('dialog', (d) => {
		problems.push(`dialog: ${d.message()}`);
		d.dismiss().catch(() => {});
	});
	await page.goto(`http://127.0.0.1:${port}/index.html#profileURL=/profile.json&view=sandwich`);
	// Loaded: the title names the file's profile group; failed: the message.
	const state = await page.waitForFunction(() => {
		const t = document.body.innerText;
		if (t.includes('Something went wrong'))
			return 'error';
		// The table's first row (a "total", "\tself", "\tname" group)
		// too: the header shows before the rows are drawn.
		return t.includes('Symbol Name') && /\n\t[^\n]*\n\t/.test(t)
			? 'loaded' : null;
	}, null, { timeout: 60000, polling: 100 }).then((h) => h.jsonValue(),
		() => 'timeout');
	if (state !== 'loaded')
		problems.push(`speedscope did not load the file (${state})`);
	const read = () => page.evaluate(() => {
		const t = document.body.innerText;
		// The toolbar: the view modes, then the profile's name, with
		// " (i/n)" when the file has more than one.
		const head = t.split('\n')[1] || '';
		const m = head.match(/^(.*) \((\d+)\/(\d+)\)$/) || [null, head, 1, 1];
		const syms = [];
		const rows = t.split('\n');
		// Sandwich table: "total", "\tself", "\tname" lines.
		for (let i = 0; i + 2 < rows.length; i++)
			if (/^\t/.test(rows[i + 1]) && /^\t/.test(rows[i + 2]) &&
			    !/^\t/.test(rows[i]))
				syms.push(rows[i + 2].slice(1));
		return { name: m[1], index: +m[2], count: +m[3], symbols: syms };
	});
	if (state === 'loaded') {
		let p = await read();
		while (p) {
			out.profiles.push(p);
			if (p.index >= p.count)
				break;
			const want = p.index + 1;
			await page.keyboard.press('n');
			await page.waitForFunction((w) =>
				new RegExp(` \\(${w}\\/\\d+\\)\\n`).test(document.body.innerText) &&
				/\n\t[^\n]*\n\t/.test(document.body.innerText),
			want, { timeout: 30000, polling: 100 }).catch(() => {});
			p = await read();
			if (!p || p.index !== want) {
				problems.push(`could not switch to profile ${want}`);
				break;
			}
		}
	}
} finally {
	await browser.close();
	server.close();
}
console.log(JSON.stringify(out, null, 1));
