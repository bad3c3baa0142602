"""Recipes: scripted tuning plans the dashboard plays step by step, deciding each step from the last result.

The "four-step" recipe (the usual way to tune dynamic batching by hand):
  1. baseline: dynamic batching off;
  2. enable dynamic batching (Triton's defaults, queue delay 100 us);
  3. preferred_batch_size 4, 8, 16, ... (doubling, up to max_batch_size) while p99 stays under the budget;
  4. sweep concurrency (the best config so far) over a few load levels.

    r = FourStep(p99_budget_ms=50, max_batch_size=32, concurrencies=(8, 16, 32, 64))
    action = r.next(None)              # a RecipeAction: its edits and load, its step name
    action = r.next(steady_figures)    # ... until None
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class RecipeAction:
    step: int  # 1..4
    title: str
    edits: dict = field(default_factory=dict)  # config edits (path -> value; None removes)
    concurrency: int | None = None


@dataclass
class StepResult:
    action: RecipeAction
    figures: dict | None  # steady figures (throughput, p99_ms, ...) or None when the change failed


class FourStep:
    name = "four-step"

    def __init__(self, p99_budget_ms: float, max_batch_size: int, concurrencies=(8, 16, 32, 64),
                 first_preferred: int = 4, queue_delay_us: int = 100) -> None:
        self.budget = p99_budget_ms
        self.max_batch_size = max(1, max_batch_size)
        self.concurrencies = tuple(concurrencies)
        self.first_preferred = first_preferred
        self.queue_delay_us = queue_delay_us
        self.results: list[StepResult] = []
        self._pending: RecipeAction | None = None
        self._queue: list[RecipeAction] = [RecipeAction(1, "baseline: no batching", {"dynamic_batching": None})]
        self._best_preferred: int | None = None

    def _under(self, figures: dict | None) -> bool:
        return bool(figures) and figures.get("p99_ms") is not None and figures["p99_ms"] <= self.budget

    def next(self, figures: dict | None) -> RecipeAction | None:
        """The next action, given the steady figures of the previous one (None for the first call)."""
        if self._pending is not None:
            done = self._pending
            self.results.append(StepResult(done, figures))
            self._decide(done, figures)
        if not self._queue:
            self._pending = None
            return None
        self._pending = self._queue.pop(0)
        return self._pending

    def _decide(self, done: RecipeAction, figures: dict | None) -> None:
        if done.step == 1:
            self._queue.append(RecipeAction(2, "enable dynamic batching", {
                "dynamic_batching": {}, "dynamic_batching.max_queue_delay_microseconds": self.queue_delay_us}))
        elif done.step == 2:
            if self.first_preferred <= self.max_batch_size:
                self._queue.append(self._preferred(self.first_preferred))
            else:
                self._sweep()
        elif done.step == 3:
            size = done.edits["dynamic_batching.preferred_batch_size"][0]
            if self._under(figures):
                self._best_preferred = size
                if size * 2 <= self.max_batch_size:
                    self._queue.append(self._preferred(size * 2))
                    return
            self._sweep()

    def _preferred(self, size: int) -> RecipeAction:
        return RecipeAction(3, f"preferred batch size {size}", {"dynamic_batching.preferred_batch_size": [size]})

    def _sweep(self) -> None:
        edits = {"dynamic_batching.preferred_batch_size": [self._best_preferred] if self._best_preferred else []}
        for i, c in enumerate(self.concurrencies):
            self._queue.append(RecipeAction(4, f"concurrency {c}", edits if i == 0 else {}, concurrency=c))

    def summary(self) -> list[dict]:
        out = []
        for r in self.results:
            f = r.figures or {}
            out.append({"step": r.action.step, "title": r.action.title, "throughput": f.get("throughput"),
                        "p99_ms": f.get("p99_ms"), "ok": r.figures is not None,
                        "under_budget": self._under(r.figures)})
        return out
