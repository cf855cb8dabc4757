// Reads the "TEST" mark off an I420 frame the way an eye would, knowing nothing of how the
// agent lays it out: finds the red box in the frame's top-left corner, the white letters in
// it, cuts the letters' extent into the 5×7 cells of four letters and says which cells are
// inked. Used on frames marked in memory and on frames a visitor received over WebRTC (so
// the thresholds allow for the encoder's blur).

/** The four letters as they must read, cell by cell ('#' inked). */
export const EXPECTED_LETTERS: Record<'T' | 'E' | 'S', string[]> = {
  T: ['#####', '..#..', '..#..', '..#..', '..#..', '..#..', '..#..'],
  E: ['#####', '#....', '#....', '####.', '#....', '#....', '#####'],
  S: ['.###.', '#...#', '#....', '.###.', '....#', '#...#', '.###.'],
};
export const EXPECTED_WORD = ['T', 'E', 'S', 'T'].map((l) => EXPECTED_LETTERS[l as 'T' | 'E' | 'S'].join('/'));

export interface ReadMark {
  /** The red box's extent (luma pixels, end exclusive); undefined when there is no red box. */
  box?: { x0: number; y0: number; x1: number; y1: number };
  /** Red pixels in the searched corner (the top-left quarter's width, a quarter of the height). */
  redPixels: number;
  /** Each letter's 5×7 cells as rows joined by '/', when the box holds letters. */
  letters: string[];
  /** Mean luma of the letters' inked cells and of the box around them. */
  inkLuma?: number;
  boxLuma?: number;
}

const RED_MIN_V = 170;
const RED_MAX_U = 120;
const INK_MIN_Y = 170;

export function readMark(data: Uint8Array, width: number, height: number): ReadMark {
  const chromaWidth = Math.ceil(width / 2);
  const uPlane = width * height;
  const vPlane = uPlane + chromaWidth * Math.ceil(height / 2);
  const searchW = Math.floor(width / 2);
  const searchH = Math.floor(height / 4);
  const red = (x: number, y: number) => {
    const c = (y >> 1) * chromaWidth + (x >> 1);
    return data[vPlane + c]! >= RED_MIN_V && data[uPlane + c]! <= RED_MAX_U;
  };
  // The box: rows and columns with a run of red (a stray reddish pixel is not a box).
  let redPixels = 0;
  const rowsRed = new Array<number>(searchH).fill(0);
  const colsRed = new Array<number>(searchW).fill(0);
  for (let y = 0; y < searchH; y++)
    for (let x = 0; x < searchW; x++)
      if (red(x, y)) {
        redPixels++;
        rowsRed[y]!++;
        colsRed[x]!++;
      }
  const rows = rowsRed.flatMap((n, y) => (n >= 8 ? [y] : []));
  const cols = colsRed.flatMap((n, x) => (n >= 8 ? [x] : []));
  if (rows.length === 0 || cols.length === 0) return { redPixels, letters: [] };
  const box = { x0: cols[0]!, y0: rows[0]!, x1: cols.at(-1)! + 1, y1: rows.at(-1)! + 1 };

  // The letters: the bright pixels' extent inside the box, between each row's first and last
  // red pixel (its rounded corners show what is behind them).
  let ix0 = Infinity;
  let iy0 = Infinity;
  let ix1 = -1;
  let iy1 = -1;
  for (let y = box.y0; y < box.y1; y++) {
    let from = box.x0;
    while (from < box.x1 && !red(from, y)) from++;
    let to = box.x1 - 1;
    while (to > from && !red(to, y)) to--;
    for (let x = from + 1; x < to; x++)
      if (data[y * width + x]! >= INK_MIN_Y) {
        ix0 = Math.min(ix0, x);
        iy0 = Math.min(iy0, y);
        ix1 = Math.max(ix1, x + 1);
        iy1 = Math.max(iy1, y + 1);
      }
  }
  if (ix1 < 0) return { box, redPixels, letters: [] };
  // Four letters of 5 cells and 3 gaps of one: 23 cells across, 7 down.
  const cellW = (ix1 - ix0) / 23;
  const cellH = (iy1 - iy0) / 7;
  let inkSum = 0;
  let inkCells = 0;
  const cells: boolean[][] = [];
  for (let gy = 0; gy < 7; gy++) {
    const row: boolean[] = [];
    for (let gx = 0; gx < 23; gx++) {
      // The cell's middle half: its edges are where encoding blurs letter into box.
      let sum = 0;
      let n = 0;
      for (let y = Math.floor(iy0 + (gy + 0.25) * cellH); y < Math.ceil(iy0 + (gy + 0.75) * cellH); y++)
        for (let x = Math.floor(ix0 + (gx + 0.25) * cellW); x < Math.ceil(ix0 + (gx + 0.75) * cellW); x++) {
          sum += data[y * width + x]!;
          n++;
        }
      const mean = sum / Math.max(1, n);
      const inked = mean >= INK_MIN_Y - 20;
      if (inked) {
        inkSum += mean;
        inkCells++;
      }
      row.push(inked);
    }
    cells.push(row);
  }
  const letters = [0, 1, 2, 3].map((l) =>
    cells
      .map((row) =>
        row
          .slice(6 * l, 6 * l + 5)
          .map((inked) => (inked ? '#' : '.'))
          .join(''),
      )
      .join('/'),
  );
  // The box's own colour: a strip above the letters.
  let boxSum = 0;
  let boxN = 0;
  for (let y = box.y0 + 2; y < iy0 - 1; y++)
    for (let x = ix0; x < ix1; x++) {
      boxSum += data[y * width + x]!;
      boxN++;
    }
  return {
    box,
    redPixels,
    letters,
    inkLuma: inkSum / Math.max(1, inkCells),
    boxLuma: boxN ? boxSum / boxN : undefined,
  };
}
