"""The E1 budget: what a budget is, how it is written, and the per-token rule that enforces it.

Engine-agnostic: nothing here imports torch, transformers or vLLM. Backends drive a
:class:`BudgetState` per sample (single pass) or run the two phases themselves, and build a
:class:`SampleRecord` from the emitted token ids with :func:`build_record`.

Semantics (``e1``, per sample, thinking budget ``t``, solution budget ``s``):

- thinking: at most ``t`` sampled tokens; a ``</think>`` sampled among them ends the phase;
- if none was sampled, exactly one ``</think>`` is *forced* (appended, not sampled);
- an EOS during thinking does not end the answer: it is replaced by ``</think>``. The single-pass
  processors move EOS's probability onto ``</think>`` (the outcome distribution is that of
  "drop the EOS, force ``</think>``"); the two-phase path drops the sampled EOS and forces;
- solution: at most ``s`` sampled tokens after ``</think>`` (a sampled EOS counts), ending at EOS
  or at the budget. At the budget the single pass forces EOS to stop the engine; that EOS is a
  stopping device, not part of the response, and :func:`build_record` strips it.

Other modes on the same code path: ``none`` (no intervention, at most ``max_length`` tokens),
``truncate`` (no intervention, cut at ``total`` tokens), ``s1`` (budget forcing: like ``e1`` but
the forced close is ``</think>`` followed by a short answer cue, after which the model answers
within ``s``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

THINK_CLOSE = "</think>"
DEFAULT_S1_CUE = "\n\n**Final Answer**\n"


class BudgetError(ValueError):
    """A budget, mode or tokenizer that cannot be used; the message says what to fix."""


class Mode(str, Enum):
    E1 = "e1"
    NONE = "none"
    TRUNCATE = "truncate"
    S1 = "s1"


_AMOUNT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kK]?)\s*$")


def parse_tokens(text: str | int, what: str = "budget") -> int:
    """Parse a token count written as ``1024``, ``1k`` or ``0.5k`` (k = 1024)."""
    if isinstance(text, int):
        return text
    match = _AMOUNT.match(str(text))
    if not match:
        raise BudgetError(f"{what} {text!r} is not a token count: write e.g. 1024, 1k or 0.5k")
    value = float(match.group(1)) * (1024 if match.group(2) else 1)
    if value != int(value):
        raise BudgetError(f"{what} {text!r} is not a whole number of tokens")
    return int(value)


@dataclass(frozen=True)
class Budget:
    """A budget plan for one generation.

    ``thinking``/``solution`` are token counts for ``e1`` and ``s1``; ``total`` is the cut for
    ``truncate`` and the maximum length for ``none``. ``cue`` is the text forced after
    ``</think>`` in ``s1`` mode.
    """

    thinking: int | None = None
    solution: int | None = None
    mode: Mode = Mode.E1
    total: int | None = None
    cue: str = DEFAULT_S1_CUE

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", Mode(self.mode))
        if self.mode in (Mode.E1, Mode.S1):
            if self.thinking is None or self.solution is None:
                raise BudgetError(f"mode {self.mode.value} needs both a thinking and a solution budget")
            if self.thinking < 0:
                raise BudgetError(f"thinking budget must be >= 0 tokens, got {self.thinking}")
            if self.solution <= 0:
                raise BudgetError(f"solution budget must be > 0 tokens, got {self.solution}")
        else:
            if self.total is None or self.total <= 0:
                raise BudgetError(f"mode {self.mode.value} needs a total budget > 0, got {self.total}")

    @classmethod
    def parse(cls, text: str, mode: Mode | str = Mode.E1) -> Budget:
        """Parse what users write: ``1024+1024``, ``1k+1k``, ``0.5k+1k`` (e1/s1), ``2k`` (none/truncate)."""
        mode = Mode(mode)
        parts = str(text).split("+")
        if mode in (Mode.E1, Mode.S1):
            if len(parts) != 2:
                raise BudgetError(
                    f"budget {text!r} for mode {mode.value} must be THINKING+SOLUTION, e.g. 1k+1k or 1024+512"
                )
            return cls(parse_tokens(parts[0], "thinking budget"), parse_tokens(parts[1], "solution budget"), mode)
        # none/truncate take one number; t+s is accepted and means a total of t+s.
        total = sum(parse_tokens(p, "budget") for p in parts)
        return cls(mode=mode, total=total)

    def max_new_tokens(self, cue_tokens: int = 0) -> int:
        """Upper bound on emitted tokens: sampled + forced, including a forced stopping EOS.

        ``cue_tokens`` is the length of the s1 cue in tokens (``len(SpecialTokens.cue)``).
        """
        if self.mode in (Mode.NONE, Mode.TRUNCATE):
            return self.total  # type: ignore[return-value]
        cue = cue_tokens if self.mode is Mode.S1 else 0
        return self.thinking + 1 + cue + self.solution + 1  # type: ignore[operator]

    @property
    def budgeted(self) -> bool:
        """True for the modes with separate thinking and solution budgets (e1, s1)."""
        return self.mode in (Mode.E1, Mode.S1)

    @property
    def label(self) -> str:
        """Stable short name, used in file names and tables: ``1024+1024``, ``none-32768``."""
        if self.mode in (Mode.E1, Mode.S1):
            return f"{self.thinking}+{self.solution}"
        return f"{self.mode.value}-{self.total}"

    def to_extra_args(self) -> dict[str, Any]:
        """The per-request payload engines carry (vLLM ``SamplingParams.extra_args['e1']``)."""
        return {"mode": self.mode.value, "thinking": self.thinking, "solution": self.solution, "total": self.total}

    @classmethod
    def from_extra_args(cls, payload: dict[str, Any], cue: str = DEFAULT_S1_CUE) -> Budget:
        return cls(payload.get("thinking"), payload.get("solution"), Mode(payload["mode"]), payload.get("total"), cue)


class Tokenizer(Protocol):
    eos_token_id: int | None

    def convert_tokens_to_ids(self, token: str) -> Any: ...

    def encode(self, text: str, add_special_tokens: bool = ...) -> list[int]: ...

    def decode(self, ids: list[int], skip_special_tokens: bool = ...) -> str: ...


@dataclass(frozen=True)
class SpecialTokens:
    """Token ids the budget needs, taken from the tokenizer (never hard-coded)."""

    think_close: int
    eos: tuple[int, ...]
    cue: tuple[int, ...] = ()

    @classmethod
    def from_tokenizer(cls, tokenizer: Tokenizer, cue: str = DEFAULT_S1_CUE, extra_eos: tuple[int, ...] = ()) -> SpecialTokens:
        ids = tokenizer.encode(THINK_CLOSE, add_special_tokens=False)
        if len(ids) != 1:
            raise BudgetError(
                f"the tokenizer encodes {THINK_CLOSE!r} as {len(ids)} tokens {ids}; E1 needs it as one token "
                "(use an R1-style reasoning model's tokenizer, or add it with tokenizer.add_tokens(['</think>']))"
            )
        if tokenizer.eos_token_id is None:
            raise BudgetError("the tokenizer has no EOS token (eos_token_id is None); set tokenizer.eos_token")
        eos = (int(tokenizer.eos_token_id), *(int(e) for e in extra_eos if e != tokenizer.eos_token_id))
        cue_ids = tuple(tokenizer.encode(cue, add_special_tokens=False)) if cue else ()
        return cls(think_close=int(ids[0]), eos=eos, cue=cue_ids)


class Phase(str, Enum):
    THINKING = "thinking"
    FORCING = "forcing"
    SOLUTION = "solution"
    DONE = "done"


@dataclass
class BudgetState:
    """The per-sample rule of a budget, advanced one emitted token at a time in O(1).

    Use: before each decoding step ask :meth:`forced_token` (a token that must be emitted now,
    or None for free sampling) and :meth:`redirect_eos` (whether EOS must be turned into
    ``</think>`` now); after the step call :meth:`advance` with the emitted token. The queries
    have no side effects: all transitions happen in :meth:`advance` (and at construction, for
    ``t = 0``), so replaying emitted tokens through :meth:`advance` alone is exact.
    """

    budget: Budget
    tokens: SpecialTokens
    phase: Phase = Phase.THINKING
    thinking_sampled: int = 0
    solution_sampled: int = 0
    emitted: int = 0
    forced_close: bool = False
    eos_in_thinking: bool = False
    forced_eos: bool = False
    _queue: list[int] = field(default_factory=list)
    budgeted: bool = field(init=False)  # a plain bool: read at every step of every request

    def __post_init__(self) -> None:
        self.budgeted = self.budget.budgeted
        if self.budgeted and self.budget.thinking == 0:
            self._force_close()

    def forced_token(self) -> int | None:
        """The token that must be emitted next, or None if the model samples freely."""
        if not self.budgeted:
            return None
        if self.phase is Phase.FORCING:
            return self._queue[0]
        if self.phase is Phase.SOLUTION and self.solution_sampled >= self.budget.solution:  # type: ignore[operator]
            return self.tokens.eos[0]
        return None

    def redirect_eos(self) -> bool:
        """True while an EOS must not end the answer (thinking phase of e1/s1)."""
        return self.budgeted and self.phase is Phase.THINKING

    def advance(self, token: int) -> None:
        """Record the token that was emitted at this step (sampled or forced)."""
        self.emitted += 1
        if self.phase is Phase.DONE:
            return
        if not self.budgeted:
            if self.phase is Phase.THINKING and token == self.tokens.think_close:
                self.phase = Phase.SOLUTION
            return
        if self.phase is Phase.FORCING:
            self._queue.pop(0)
            if not self._queue:
                self.phase = Phase.SOLUTION
        elif self.phase is Phase.THINKING:
            if token == self.tokens.think_close:
                self.phase = Phase.SOLUTION
            elif token in self.tokens.eos:
                # Only reachable when the engine emitted EOS anyway (two-phase drivers drop it).
                self.eos_in_thinking = True
                self._force_close()
            else:
                self.thinking_sampled += 1
                if self.thinking_sampled >= self.budget.thinking:  # type: ignore[operator]
                    self._force_close()
        elif self.phase is Phase.SOLUTION:
            if self.solution_sampled >= self.budget.solution:  # type: ignore[operator]
                self.forced_eos = True
                self.phase = Phase.DONE
                return
            self.solution_sampled += 1
            if token in self.tokens.eos:
                self.phase = Phase.DONE

    def _force_close(self) -> None:
        self.forced_close = True
        self.phase = Phase.FORCING
        self._queue = [self.tokens.think_close]
        if self.budget.mode is Mode.S1:
            self._queue += list(self.tokens.cue)


@dataclass
class SampleRecord:
    """One generated sample and its budget accounting.

    ``token_ids`` is the response as the model sees it: thinking, ``</think>`` (sampled or
    forced), any forced cue, then the solution including a sampled EOS. ``thinking_tokens`` and
    ``solution_tokens`` count *sampled* tokens only (forced tokens are never counted);
    ``forced_mask[i]`` is True where ``token_ids[i]`` was forced rather than sampled.
    """

    prompt_index: int
    sample_index: int
    token_ids: list[int]
    forced_mask: list[bool]
    thinking_tokens: int
    solution_tokens: int
    think_closed: bool
    forced_close: bool
    solution_truncated: bool
    finish_reason: str
    thinking_text: str = ""
    solution_text: str = ""
    text: str = ""
    logprobs: list[float] | None = None
    eos_in_thinking: bool = False

    @property
    def total_tokens(self) -> int:
        return len(self.token_ids)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items()}


def close_phase_one(ids: Sequence[int], budget: Budget, tokens: SpecialTokens) -> tuple[list[int], list[int]]:
    """How a two-phase driver ends thinking: ``(kept, forced)``, phase 2 continues from ``kept + forced``.

    ``ids`` are phase 1's tokens, ending at the first ``</think>`` or EOS, or cut at ``t``.
    A sampled ``</think>`` is kept and nothing is forced; a sampled EOS is dropped and replaced by
    ``</think>`` alone (what the single pass's EOS redirect produces); otherwise ``</think>`` is
    forced, followed in s1 mode by the cue.
    """
    if ids and ids[-1] == tokens.think_close:
        return list(ids), []
    if ids and ids[-1] in tokens.eos:
        return list(ids[:-1]), [tokens.think_close]
    return list(ids), [tokens.think_close, *(tokens.cue if budget.mode is Mode.S1 else ())]


def build_record(
    token_ids: list[int],
    budget: Budget,
    tokens: SpecialTokens,
    tokenizer: Tokenizer | None = None,
    *,
    prompt_index: int = 0,
    sample_index: int = 0,
    logprobs: list[float] | None = None,
    length_capped: bool = False,
    eos_in_thinking: bool = False,
) -> SampleRecord:
    """Replay the budget rule over emitted ``token_ids`` and account for every token.

    ``token_ids`` are what the engine emitted after the prompt (padding removed). A forced
    stopping EOS at the solution budget is stripped. ``length_capped`` says the engine stopped
    because it reached its own token limit (so a sample without EOS counts as truncated).
    ``eos_in_thinking`` marks that a two-phase driver dropped an EOS sampled during thinking and
    appended ``</think>``: that ``</think>`` is recorded as forced.
    """
    state = BudgetState(budget, tokens)
    kept: list[int] = []
    forced: list[bool] = []
    for token in token_ids:
        if state.phase is Phase.DONE:
            break
        must = state.forced_token()
        if must is not None and state.phase is Phase.SOLUTION:
            state.advance(token)  # the stopping EOS: not part of the response
            break
        kept.append(token)
        forced.append(must is not None and token == must)
        state.advance(token)
    if logprobs is not None:
        logprobs = list(logprobs[: len(kept)])

    close_at = kept.index(tokens.think_close) if tokens.think_close in kept else None
    if eos_in_thinking and close_at is not None:
        forced[close_at] = True  # a two-phase driver appended it after dropping the sampled EOS
    if close_at is None:
        thinking_ids, solution_ids, tail_start = kept, [], len(kept)
    else:
        thinking_ids = kept[:close_at]
        tail_start = close_at + 1
        while tail_start < len(kept) and forced[tail_start]:
            tail_start += 1
        solution_ids = kept[tail_start:]
    ended_by_eos = bool(kept) and kept[-1] in tokens.eos and not forced[-1]
    if state.budgeted:
        truncated = state.forced_eos or (not ended_by_eos and state.phase is Phase.SOLUTION)
    else:
        truncated = not ended_by_eos and (length_capped or len(kept) >= budget.total)  # type: ignore[operator]
    finish = "stop" if ended_by_eos else "length"

    text = thinking_text = solution_text = ""
    if tokenizer is not None:
        text = tokenizer.decode(kept, skip_special_tokens=True)
        thinking_text = tokenizer.decode(thinking_ids, skip_special_tokens=True)
        solution_text = tokenizer.decode(kept[tail_start:] if close_at is not None else [], skip_special_tokens=True)
    solution_count = len(solution_ids)
    return SampleRecord(
        prompt_index=prompt_index,
        sample_index=sample_index,
        token_ids=kept,
        forced_mask=forced,
        thinking_tokens=len(thinking_ids),
        solution_tokens=solution_count,
        think_closed=close_at is not None,
        forced_close=bool(close_at is not None and forced[close_at]),
        solution_truncated=truncated,
        finish_reason=finish,
        thinking_text=thinking_text,
        solution_text=solution_text,
        text=text,
        logprobs=logprobs,
        eos_in_thinking=eos_in_thinking or state.eos_in_thinking,
    )
