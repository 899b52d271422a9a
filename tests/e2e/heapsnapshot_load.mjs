// ljlog e2e: Chrome DevTools' own heap snapshot loader (the npm package
// heap-snapshot-toolkit, DevTools' front end code) opens `ljlog export
// --format heapsnapshot` files (tests/e2e/export_heapsnapshot.sh).
//   node heapsnapshot_load.mjs TOOLS A.heapsnapshot [B.heapsnapshot]
// Prints JSON: per file what the loader computed (nodes, self sizes, the
// statistics' total, the root's retained size, the class summary, the
// problems it reported, the objects (odd IDs) and their self sizes, and
// the node a "HOLD" property points to with its
// retained size), and for two files DevTools' comparison of B against A by
// node ID, with the IDs of the objects it says were added.
import { createReadStream } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const [tools, fileA, fileB] = process.argv.slice(2)
const kit = await import(pathToFileURL(join(tools, 'node_modules',
  'heap-snapshot-toolkit', 'index.js')).href)
const { HeapSnapshotLoader, SecondaryInitManager } = kit.DevToolsAPI

// As the package's parse(), keeping the problems the loader reports
// (nodes no root reaches, ...) instead of dropping them.
async function load (file) {
  const loader = new HeapSnapshotLoader.HeapSnapshotLoader()
  await new Promise((resolve, reject) => {
    const s = createReadStream(file, 'utf-8')
    s.on('error', reject)
    s.on('end', resolve)
    s.on('data', chunk => loader.write(chunk))
  })
  loader.close()
  await loader.parsingComplete
  const problems = []
  const channel = new MessageChannel()
  channel.port1.addEventListener('message', ev => {
    if (ev.data && ev.data.problemReport) problems.push(String(ev.data.problemReport))
  })
  try {
    // eslint-disable-next-line no-new
    new SecondaryInitManager(channel.port2)
    const snap = await loader.buildSnapshot(channel.port1)
    return { snap, problems }
  } finally {
    channel.port1.close()
    channel.port2.close()
  }
}

function facts (snap, problems) {
  const nf = snap.nodeFieldCount
  // Objects have odd node IDs, synthetic nodes (roots, parts) even ones.
  const out = { nodes: snap.nodeCount, self_total: 0, objects: 0, objects_self: 0, by_type: {}, problems }
  let hold = null
  for (let i = 0; i < snap.nodeCount; i++) {
    const node = snap.createNode(i * nf)
    out.self_total += node.selfSize()
    if (node.id() % 2 === 1) {
      out.objects++
      out.objects_self += node.selfSize()
    }
    out.by_type[node.type()] = (out.by_type[node.type()] || 0) + 1
    for (let it = node.edges(); it.hasNext(); it.next()) {
      if (it.edge.type() === 'property' && it.edge.name() === 'HOLD') {
        const h = it.edge.node()
        hold = { id: h.id(), name: h.name(), type: h.type(), self: h.selfSize(), retained: h.retainedSize() }
      }
    }
  }
  out.hold = hold
  out.total_size = snap.totalSize
  out.root_retained = snap.rootNode().retainedSize()
  out.statistics_total = snap.getStatistics().total
  out.classes = {}
  const ag = snap.aggregatesWithFilter({})
  for (const k in ag) out.classes[ag[k].name] = { count: ag[k].count, self: ag[k].self }
  return out
}

const a = await load(fileA)
const res = { a: facts(a.snap, a.problems) }
if (fileB) {
  const b = await load(fileB)
  res.b = facts(b.snap, b.problems)
  const d = await kit.diff(a.snap, b.snap)
  res.diff = {}
  for (const k in d) {
    const x = d[k]
    res.diff[x.name] = {
      added: x.addedCount,
      removed: x.removedCount,
      added_size: x.addedSize,
      removed_size: x.removedSize,
      added_ids: x.addedIndexes.map(i => b.snap.createNode(i).id())
    }
  }
}
process.stdout.write(JSON.stringify(res) + '\n')
