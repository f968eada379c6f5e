// The source map of a bundle built from tsc's output, cut down to our own TypeScript files: shared by the
// bundle builds (scripts/build-light.mjs, scripts/build-probe.mjs, scripts/build-supervisor.mjs).
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The base64 VLQ numbers of one source-map segment. */
function decodeSegment(text) {
  const out = [];
  let value = 0;
  let shift = 0;
  for (const ch of text) {
    const digit = B64.indexOf(ch);
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

function encodeSegment(numbers) {
  let text = '';
  for (const n of numbers) {
    let v = n < 0 ? (-n << 1) | 1 : n << 1;
    do {
      let digit = v & 31;
      v >>>= 5;
      if (v > 0) digit |= 32;
      text += B64[digit];
    } while (v > 0);
  }
  return text;
}

/**
 * Keeps in the bundle's source map only the sources that are our own TypeScript files (packages/*\/src):
 * a position in a bundled dependency (zod) or a generated helper maps to nothing, so a stack frame there
 * names the bundle itself — a real file — instead of a node_modules path that holds only in this checkout.
 * Our sources are written relative to the map: `../src/…` inside the CLI package, `../../sdk/src/…` and
 * `../../supervisor/src/…` beside it, which holds both here and where npm installs the packages side by side
 * (node_modules/@scienceevolve/).
 */
export function ownSourcesOnly(map) {
  const keep = map.sources.map((source) => /^(\.\.\/src\/|\.\.\/\.\.\/(sdk|supervisor)\/src\/)/.test(source));
  const newIndex = [];
  const sources = [];
  map.sources.forEach((source, i) => {
    if (keep[i]) {
      newIndex[i] = sources.length;
      sources.push(source);
    }
  });
  // Absolute values while decoding; new deltas while encoding (the generated column restarts each line).
  let src = 0;
  let srcLine = 0;
  let srcCol = 0;
  let name = 0;
  let outSrc = 0;
  let outLine = 0;
  let outCol = 0;
  let outName = 0;
  const lines = map.mappings.split(';').map((line) => {
    let col = 0;
    let outGenCol = 0;
    const segments = [];
    for (const text of line.split(',')) {
      if (text === '') continue;
      const seg = decodeSegment(text);
      col += seg[0];
      const genDelta = col - outGenCol;
      outGenCol = col;
      if (seg.length === 1) {
        segments.push(encodeSegment([genDelta]));
        continue;
      }
      src += seg[1];
      srcLine += seg[2];
      srcCol += seg[3];
      if (seg.length === 5) name += seg[4];
      if (!keep[src]) {
        segments.push(encodeSegment([genDelta]));
        continue;
      }
      const out = [genDelta, newIndex[src] - outSrc, srcLine - outLine, srcCol - outCol];
      outSrc = newIndex[src];
      outLine = srcLine;
      outCol = srcCol;
      if (seg.length === 5) {
        out.push(name - outName);
        outName = name;
      }
      segments.push(encodeSegment(out));
    }
    return segments.join(',');
  });
  return { ...map, sources, mappings: lines.join(';') };
}
