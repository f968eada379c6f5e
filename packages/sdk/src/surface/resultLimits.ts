/**
 * The image limits of a forwarded answer: an image over 10 MiB decoded or over 50 megapixels is refused
 * with `image_too_large`, never trimmed or re-encoded. The size limit of the whole answer (1 MiB by
 * default) is the gate's (`serviceGate.ts`); these limits apply on top of it, so they bite on their own
 * only when the result limit is raised, or for a small file that declares a huge canvas (a decompression
 * bomb). Dimensions are read from the image's own header (PNG, JPEG, GIF, WebP); no decoder is loaded.
 */
import { SdkError } from '../errors.js';

/** Decoded bytes of one image at most: 10 MiB. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** Pixels (width × height) of one image at most: 50 megapixels. */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** How much of an image is decoded to find its header: enough for a JPEG's metadata before its frame header. */
const HEADER_SCAN_BYTES = 256 * 1024;

/** An image's width and height in pixels, as its header declares them. */
export interface ImageSize {
  format: 'png' | 'jpeg' | 'gif' | 'webp';
  width: number;
  height: number;
}

/** The dimensions `bytes` (the start of an image file) declare, or undefined for an unknown or cut header. */
export function imageSize(bytes: Uint8Array): ImageSize | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) {
    if (b.toString('latin1', 12, 16) !== 'IHDR') return undefined;
    return { format: 'png', width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  if (b.length >= 10 && (b.toString('latin1', 0, 6) === 'GIF87a' || b.toString('latin1', 0, 6) === 'GIF89a')) {
    return { format: 'gif', width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b);
  if (b.length >= 16 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') {
    return webpSize(b);
  }
  return undefined;
}

/** Start-of-frame markers (baseline, progressive, lossless, arithmetic): they carry the frame's size. */
const JPEG_SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpegSize(b: Buffer): ImageSize | undefined {
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i += 1; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2; // markers without a length
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return undefined; // scan data or end before any frame header
    const length = b.readUInt16BE(i + 2);
    if (JPEG_SOF.has(marker)) {
      if (i + 9 > b.length) return undefined;
      return { format: 'jpeg', height: b.readUInt16BE(i + 5), width: b.readUInt16BE(i + 7) };
    }
    if (length < 2) return undefined;
    i += 2 + length;
  }
  return undefined;
}

function webpSize(b: Buffer): ImageSize | undefined {
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X' && b.length >= 30) {
    return { format: 'webp', width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
  }
  if (chunk === 'VP8L' && b.length >= 25 && b[20] === 0x2f) {
    const bits = b.readUInt32LE(21);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ' && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) {
    return { format: 'webp', width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  }
  return undefined;
}

/** One base64 image found in an answer, with where it is (a JSON path into the result). */
interface FoundImage {
  at: string;
  data: string;
  mimeType: string | undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The images of one content block (`image`, or an embedded `resource` whose blob is `image/*`). */
function imagesOfBlock(block: unknown, at: string, found: FoundImage[]): void {
  if (!isObject(block)) return;
  if (block.type === 'image' && typeof block.data === 'string') {
    found.push({ at, data: block.data, mimeType: typeof block.mimeType === 'string' ? block.mimeType : undefined });
  } else if (block.type === 'resource' && isObject(block.resource)) {
    imagesOfBlob(block.resource, `${at}.resource`, found);
  }
}

function imagesOfBlob(contents: Record<string, unknown>, at: string, found: FoundImage[]): void {
  const mimeType = typeof contents.mimeType === 'string' ? contents.mimeType : undefined;
  if (typeof contents.blob === 'string' && mimeType?.toLowerCase().startsWith('image/')) {
    found.push({ at: `${at}.blob`, data: contents.blob, mimeType });
  }
}

/** Every image of a tool result (`content`), a resource read (`contents`) or a prompt (`messages[].content`). */
function imagesOf(result: unknown): FoundImage[] {
  const found: FoundImage[] = [];
  if (!isObject(result)) return found;
  if (Array.isArray(result.content)) {
    result.content.forEach((block, i) => {
      imagesOfBlock(block, `content[${i}]`, found);
    });
  }
  if (Array.isArray(result.contents)) {
    result.contents.forEach((c, i) => {
      if (isObject(c)) imagesOfBlob(c, `contents[${i}]`, found);
    });
  }
  if (Array.isArray(result.messages)) {
    result.messages.forEach((m, i) => {
      if (isObject(m)) imagesOfBlock(m.content, `messages[${i}].content`, found);
    });
  }
  return found;
}

/**
 * Returns `result` unchanged when every image in it is within the limits.
 *
 * @param what - the request, for messages (`tool "render"`).
 * @throws SdkError `image_too_large` naming the service, the request, where the image is, and its size.
 */
export function checkImageLimits<T>(result: T, service: string, what: string): T {
  for (const image of imagesOf(result)) {
    const bytes = Buffer.byteLength(image.data, 'base64');
    const headerChars = Math.min(image.data.length, Math.ceil(HEADER_SCAN_BYTES / 3) * 4);
    const size = imageSize(Buffer.from(image.data.slice(0, headerChars), 'base64'));
    const pixels = size === undefined ? undefined : size.width * size.height;
    const overBytes = bytes > MAX_IMAGE_BYTES;
    const overPixels = pixels !== undefined && pixels > MAX_IMAGE_PIXELS;
    if (!overBytes && !overPixels) continue;
    const dimensions = size === undefined ? '' : ` (${size.format}, ${size.width} × ${size.height} pixels)`;
    const reason = overBytes
      ? `${bytes} bytes decoded, over the ${MAX_IMAGE_BYTES}-byte (10 MiB) limit`
      : `${pixels} pixels, over the ${MAX_IMAGE_PIXELS} (50 megapixel) limit`;
    throw new SdkError(
      'image_too_large',
      `service "${service}" answered ${what} with an image at ${image.at}${dimensions}: ${reason}; the answer was not passed on`,
      {
        remedy: 'Ask the tool for a smaller image (a thumbnail, a crop, a lower resolution).',
        data: {
          service,
          at: image.at,
          bytes,
          ...(size === undefined ? {} : { format: size.format, width: size.width, height: size.height, pixels }),
          maxImageBytes: MAX_IMAGE_BYTES,
          maxImagePixels: MAX_IMAGE_PIXELS,
        },
      },
    );
  }
  return result;
}
