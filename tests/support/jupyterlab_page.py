"""A JupyterLab page in headless Chromium, as the browser test and ``bench.dashboard`` drive
it: run a notebook's cells from the Run menu, find a partition in the live dashboard, and
click a broker card's fault verb."""

from __future__ import annotations

from typing import Any

PARTITION_LED_BY_A_RUNNING_BROKER = """(leaders) => {
  for (const p of document.querySelectorAll('.kl-live .kl-partition')) {
    const leader = p.dataset.leader;
    const card = document.querySelector(`.kl-card-${leader} .kl-broker[data-state="running"]`);
    const now = leaders?.[`${p.dataset.topic}/${p.dataset.partition}`];
    const drawn = p.querySelectorAll('.kl-cell').length > 0;
    if (leader && card && drawn && [undefined, leader].includes(now))
      return [p.dataset.topic, p.dataset.partition, leader];
  }
  return null;
}"""
"""A partition drawn in the live widget whose leader's card reads running:
``[topic, partition, leader]``, or null. Given ``{"topic/partition": "leader"}`` (the
cluster's leaders now), only a partition drawn with that leader: a page still drawing an
older state would draw a move made before the click at its next refresh."""
LEADER_CHANGED = """([topic, partition, old]) => {
  const p = document.querySelector(
    `.kl-live .kl-partition[data-topic="${topic}"][data-partition="${partition}"]`);
  return p && !['', old].includes(p.dataset.leader) ? p.dataset.leader : null;
}"""
"""The partition's new leader, once the live widget draws one other than ``old``."""
KILL_AND_TIME_THE_NEW_LEADER = """([topic, partition, old, timeoutMs]) => new Promise(resolve => {
  const drawn = () => {
    const p = document.querySelector(
      `.kl-live .kl-partition[data-topic="${topic}"][data-partition="${partition}"]`);
    return p && !['', old].includes(p.dataset.leader);
  };
  const observer = new MutationObserver(() => {
    if (drawn()) {
      observer.disconnect();
      const state = document.querySelector('.kl-live [data-state-ms]')?.dataset.stateMs;
      resolve([performance.now() - clicked, clickedAt, state ? Number(state) : null]);
    }
  });
  observer.observe(document.body, {subtree: true, childList: true, attributes: true});
  setTimeout(() => { observer.disconnect(); resolve([null, clickedAt, null]); }, timeoutMs);
  const clickedAt = Date.now();
  const clicked = performance.now();
  document.querySelector(`.kl-card-${old} button.kl-verb-kill`).click();
})"""
"""Click kill on ``old``'s card; resolves with the milliseconds until the widget draws
another leader for the partition (null after ``timeoutMs``), the wall-clock time of the
click (ms since the epoch, to place the cluster's events) and that of the dashboard state
drawn (when the kernel built it: the rest is the trip to the page and its drawing). Timed
in the page, by the DOM changes themselves: no polling interval is added to the figure."""
NOTEBOOK_TIMEOUT_MS = 300_000  # a lab runs in under 2 minutes; the machine may be loaded


def run_all_cells(page: Any) -> None:
    """Run ▸ Run All Cells once the kernel is connected and idle (clicked earlier, the
    request is dropped), and see every cell finish without a traceback."""
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-InputPrompt')]"
        ".some(p => /\\[(\\*|\\d+)\\]/.test(p.textContent))"
    )
    page.wait_for_function(
        "() => ![...document.querySelectorAll('.jp-InputPrompt')]"
        ".some(p => p.textContent.includes('[*]'))",
        timeout=NOTEBOOK_TIMEOUT_MS,
    )
    failed = page.locator(".jp-OutputArea-output", has_text="Traceback (most recent call last)")
    assert failed.count() == 0, failed.evaluate_all("els => els.map(e => e.textContent)")


def dismiss_news(page: Any) -> None:
    """JupyterLab asks whether to fetch its news: no (the network is closed)."""
    news = page.locator(".jp-toast-button", has_text="No")
    if news.count():
        news.first.click()
