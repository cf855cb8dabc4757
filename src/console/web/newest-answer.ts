// A list a page loads more than once (as it opens, after each change) can have two loads in
// flight, and their answers can come back out of order: the page's first load answering after
// the one a new key started showed the list without that key. Only the newest load renders.
export function newestAnswer(): () => () => boolean {
  let asked = 0;
  return () => {
    const mine = ++asked;
    return () => mine === asked;
  };
}
