/**
 * The image limits of a forwarded answer, rule by rule: dimensions read from each format's header (a
 * table), the 10 MiB decoded limit (which a real service can reach only with the result limit raised),
 * and images found wherever an answer may carry them (tool content, embedded resources, reads, prompts).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  checkImageLimits,
  imageSize,
  MAX_IMAGE_BYTES,
  MAX_IMAGE_PIXELS,
} from '../../../packages/sdk/src/surface/resultLimits.js';
import { isSdkError, type SdkError } from '../../../packages/sdk/src/errors.js';

const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

function png(width: number, height: number): Buffer {
  const b = Buffer.alloc(33);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(width, 16);
  b.writeUInt32BE(height, 20);
  return b;
}

/** A JPEG whose frame header comes after an APP1 segment of `appBytes` and a few fill bytes. */
function jpeg(width: number, height: number, appBytes = 100): Buffer {
  const app1 = Buffer.alloc(4 + appBytes);
  app1.writeUInt16BE(0xffe1, 0);
  app1.writeUInt16BE(2 + appBytes, 2);
  const sof = Buffer.alloc(19);
  sof.writeUInt16BE(0xffc0, 0);
  sof.writeUInt16BE(17, 2);
  sof[4] = 8;
  sof.writeUInt16BE(height, 5);
  sof.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app1, Buffer.from([0xff]), sof]);
}

describe('imageSize reads each format header', () => {
  const cases: Array<[title: string, bytes: Buffer, expected: ReturnType<typeof imageSize>]> = [
    ['a real 1×1 PNG', Buffer.from(PNG_1X1, 'base64'), { format: 'png', width: 1, height: 1 }],
    ['a PNG header', png(7000, 8000), { format: 'png', width: 7000, height: 8000 }],
    [
      'a PNG whose first chunk is not IHDR',
      Buffer.concat([png(1, 1).subarray(0, 12), Buffer.from('IDAT'), Buffer.alloc(17)]),
      undefined,
    ],
    ['a PNG cut before its size', png(1, 1).subarray(0, 20), undefined],
    ['a GIF87a', Buffer.from('474946383761e803d007', 'hex'), { format: 'gif', width: 1000, height: 2000 }],
    ['a JPEG after APP1 and a fill byte', jpeg(4000, 3000), { format: 'jpeg', width: 4000, height: 3000 }],
    [
      'a JPEG with its frame header past 64 KiB of metadata',
      jpeg(9000, 9000, 65_000),
      { format: 'jpeg', width: 9000, height: 9000 },
    ],
    ['a JPEG whose scan starts before any frame header', Buffer.from('ffd8ffda000c', 'hex'), undefined],
    ['a JPEG cut inside a segment', jpeg(10, 10).subarray(0, 30), undefined],
    ['bytes of no known format', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'), undefined],
    ['nothing', Buffer.alloc(0), undefined],
  ];
  for (const [title, bytes, expected] of cases) {
    test(title, () => assert.deepEqual(imageSize(bytes), expected));
  }
});

function refusal(run: () => unknown): SdkError {
  try {
    run();
  } catch (error) {
    assert.ok(isSdkError(error), String(error));
    return error as SdkError;
  }
  assert.fail('no refusal');
}

describe('checkImageLimits', () => {
  test('an image over 10 MiB decoded is refused, one byte less passes (whatever its header)', () => {
    const ok = {
      content: [{ type: 'image', data: Buffer.alloc(MAX_IMAGE_BYTES).toString('base64'), mimeType: 'image/png' }],
    };
    assert.equal(checkImageLimits(ok, 'lab', 'tool "draw"'), ok);
    const over = {
      content: [{ type: 'image', data: Buffer.alloc(MAX_IMAGE_BYTES + 1).toString('base64'), mimeType: 'image/png' }],
    };
    const error = refusal(() => checkImageLimits(over, 'lab', 'tool "draw"'));
    assert.equal(error.code, 'image_too_large');
    assert.match(
      error.message,
      /service "lab" answered tool "draw" with an image at content\[0\]: 10485761 bytes decoded, over the 10485760-byte \(10 MiB\) limit/,
    );
    assert.match(error.remedy ?? '', /smaller image/);
    assert.equal(error.data.bytes, MAX_IMAGE_BYTES + 1);
  });

  test('pixels: exactly 50 megapixels passes, one row more is refused', () => {
    const image = (w: number, h: number) => ({
      type: 'image',
      data: png(w, h).toString('base64'),
      mimeType: 'image/png',
    });
    const fits = { content: [{ type: 'text', text: 'a' }, image(10_000, 5_000)] };
    assert.equal(checkImageLimits(fits, 'lab', 'tool "draw"'), fits);
    const error = refusal(() =>
      checkImageLimits({ content: [{ type: 'text', text: 'a' }, image(10_000, 5_001)] }, 'lab', 'tool "draw"'),
    );
    assert.equal(error.code, 'image_too_large');
    assert.deepEqual(
      { at: error.data.at, width: error.data.width, height: error.data.height, pixels: error.data.pixels },
      { at: 'content[1]', width: 10_000, height: 5_001, pixels: 50_010_000 },
    );
    assert.ok((error.data.pixels as number) > MAX_IMAGE_PIXELS);
  });

  test('images are found in embedded resources, resource reads and prompt messages; other blobs are not images', () => {
    const huge = png(20_000, 20_000).toString('base64');
    const where = [
      [
        { content: [{ type: 'resource', resource: { uri: 'x:a', mimeType: 'image/png', blob: huge } }] },
        'content[0].resource.blob',
      ],
      [
        {
          contents: [
            { uri: 'x:a', mimeType: 'text/plain', text: 'a' },
            { uri: 'x:b', mimeType: 'IMAGE/PNG', blob: huge },
          ],
        },
        'contents[1].blob',
      ],
      [
        { messages: [{ role: 'user', content: { type: 'image', data: huge, mimeType: 'image/png' } }] },
        'messages[0].content',
      ],
    ] as const;
    for (const [result, at] of where) {
      assert.equal(refusal(() => checkImageLimits(result, 'lab', 'x')).data.at, at);
    }
    const notImage = { contents: [{ uri: 'x:b', mimeType: 'application/octet-stream', blob: huge }] };
    assert.equal(checkImageLimits(notImage, 'lab', 'x'), notImage);
    for (const odd of [null, 'text', 42, { content: 'nope' }, { content: [null, 1, { type: 'image' }] }]) {
      assert.equal(checkImageLimits(odd, 'lab', 'x'), odd);
    }
  });
});
