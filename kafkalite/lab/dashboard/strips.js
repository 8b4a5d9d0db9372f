// The offset strips and the event feed: the Python model renders them (render.py) and this
// view swaps them in at each refresh. Cells that changed since the previous refresh flash
// once, so a student sees where the log moved; the feed keeps its scroll position.
function key(cell) {
  const row = cell.closest(".kl-replica");
  const part = cell.closest(".kl-partition");
  return `${part?.dataset.topic}/${part?.dataset.partition}/${row?.dataset.broker}/${cell.dataset.offset}`;
}

// The static snapshot displayed just before this widget is for readers without live
// widgets (exported notebooks, logs); beside the live view it would only repeat an old
// picture. The view is attached to the page only after render() returns: wait for that.
function hideStaticSnapshot(el, tries = 200) {
  if (!el.isConnected) {
    if (tries > 0) setTimeout(() => hideStaticSnapshot(el, tries - 1), 50);
    return;
  }
  const area = el.closest(".jp-OutputArea, .output");
  for (const old of area?.querySelectorAll(".kl-static") ?? []) {
    const output = old.closest(".jp-OutputArea-child, .output_area") ?? old;
    if (output.style.display !== "none") output.style.display = "none";
  }
}

function render({ model, el }) {
  const strips = document.createElement("div");
  const feed = document.createElement("div");
  el.classList.add("kl-live");
  el.append(strips, feed);

  let before = new Map();

  hideStaticSnapshot(el);
  function draw() {
    const scroll = feed.querySelector(".kl-feed")?.scrollTop ?? 0;
    strips.innerHTML = model.get("strips_html");
    feed.innerHTML = model.get("feed_html");
    const inner = feed.querySelector(".kl-feed");
    if (inner) inner.scrollTop = scroll;
    const now = new Map();
    for (const cell of strips.querySelectorAll(".kl-cell")) {
      const k = key(cell);
      now.set(k, cell.dataset.kind);
      if (before.size && before.get(k) !== cell.dataset.kind) {
        cell.animate([{ outline: "2px solid #000" }, { outline: "0 solid transparent" }], 900);
      }
    }
    before = now;
  }
  model.on("change:strips_html", draw);
  model.on("change:feed_html", draw);
  draw();
  return () => {
    model.off("change:strips_html", draw);
    model.off("change:feed_html", draw);
  };
}

export default { render };
