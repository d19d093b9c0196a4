"""Training-serving skew checks (Q69): each one runs the training-side and the serving-side
pre-processing on a tiny fixture and reports where they disagree, so a CI job can fail on it.

Standard library only, plus Jinja2 for chat templates (the engine Hugging Face chat templates are
written in). Images are nested lists ``[row][column][channel]`` of 0-255 integers; a real service would
use arrays, but the checks are the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from jinja2.sandbox import ImmutableSandboxedEnvironment


@dataclass(frozen=True)
class Finding:
    """One disagreement between the training path and the serving path."""

    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


# --8<-- [start:chat-template]
_JINJA = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)  # as transformers renders


def render_chat(template: str, messages: list[dict], *, bos_token: str = "",
                add_generation_prompt: bool = True) -> str:
    """Render ``messages`` with a chat template, the way ``apply_chat_template(tokenize=False)`` does."""
    return _JINJA.from_string(template).render(messages=messages, bos_token=bos_token,
                                               add_generation_prompt=add_generation_prompt)


def check_chat_template(trained: Callable[[list[dict]], str], served: Callable[[list[dict]], str],
                        conversations: Sequence[list[dict]]) -> list[Finding]:
    """Prompt strings must be identical, character for character: one newline or BOS changes the tokens."""
    findings = []
    for n, conv in enumerate(conversations):
        a, b = trained(conv), served(conv)
        if a != b:
            i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            findings.append(Finding("chat-template", f"conversation {n}: first difference at character {i}: "
                                    f"trained {a[i:i + 20]!r} vs served {b[i:i + 20]!r}"))
    return findings
# --8<-- [end:chat-template]


def _check_image(name: str, image: object) -> tuple[int, int, int]:
    if (not isinstance(image, list) or not image or not isinstance(image[0], list) or not image[0]
            or not isinstance(image[0][0], (list, tuple))):
        raise ValueError(f"{name} must be a non-empty [row][column][channel] nested list")
    h, w, c = len(image), len(image[0]), len(image[0][0])
    if any(len(row) != w or any(len(px) != c for px in row) for row in image):
        raise ValueError(f"{name} must be rectangular with {c} channels in every pixel")
    return h, w, c


# --8<-- [start:channel-order]
def check_channel_order(preprocess: Callable[[list], list]) -> list[Finding]:
    """Feed a pure-red RGB image; the first output plane must be the largest, whatever the normalization.

    ``preprocess`` takes a decoded RGB image ``[row][col][rgb]`` and returns planes ``[channel][row][col]``
    (the CHW layout models take). A BGR swap moves the red signal into the last plane.
    """
    red = [[(255, 0, 0)] * 4 for _ in range(4)]
    planes = preprocess(red)
    if len(planes) != 3:
        raise ValueError(f"preprocess must return 3 channel planes, got {len(planes)}")
    means = [sum(map(sum, p)) / sum(len(r) for r in p) for p in planes]
    top = max(range(3), key=means.__getitem__)
    if top != 0:
        return [Finding("channel-order", f"red input peaks in output channel {top}, not 0: "
                        f"channel means {[round(m, 3) for m in means]} (BGR/RGB swap?)")]
    return []
# --8<-- [end:channel-order]


def resize_nearest(img: list, out_h: int, out_w: int) -> list:
    """Nearest neighbour, source index floor(dst × scale) (OpenCV INTER_NEAREST's rule)."""
    h, w, _ = _check_image("img", img)
    return [[list(img[y * h // out_h][x * w // out_w]) for x in range(out_w)] for y in range(out_h)]


def resize_bilinear(img: list, out_h: int, out_w: int) -> list:
    """Two-tap bilinear with half-pixel centres and no anti-aliasing (OpenCV INTER_LINEAR's rule)."""
    h, w, c = _check_image("img", img)

    def taps(dst: int, n_in: int, n_out: int) -> tuple[int, int, float]:
        src = min(max((dst + 0.5) * n_in / n_out - 0.5, 0.0), n_in - 1)
        i0 = int(src)
        return i0, min(i0 + 1, n_in - 1), src - i0

    out = []
    for y in range(out_h):
        y0, y1, fy = taps(y, h, out_h)
        row = []
        for x in range(out_w):
            x0, x1, fx = taps(x, w, out_w)
            row.append([(img[y0][x0][k] * (1 - fx) + img[y0][x1][k] * fx) * (1 - fy)
                        + (img[y1][x0][k] * (1 - fx) + img[y1][x1][k] * fx) * fy for k in range(c)])
        out.append(row)
    return out


def resize_area(img: list, out_h: int, out_w: int) -> list:
    """Box average over each output pixel's footprint, for whole-number factors (INTER_AREA's result)."""
    h, w, c = _check_image("img", img)
    if h % out_h or w % out_w:
        raise ValueError(f"resize_area needs whole-number factors, got {h}x{w} -> {out_h}x{out_w}")
    fy, fx = h // out_h, w // out_w
    return [[[sum(img[y * fy + i][x * fx + j][k] for i in range(fy) for j in range(fx)) / (fy * fx)
              for k in range(c)] for x in range(out_w)] for y in range(out_h)]


# --8<-- [start:resize]
def stripes(size: int = 8, period: int = 4) -> list:
    """A fixture with one-pixel vertical lines: high-frequency content that exposes interpolation."""
    return [[(255, 255, 255) if x % period == 0 else (0, 0, 0) for x in range(size)] for _ in range(size)]


def check_resize(trained: Callable, served: Callable, image: list, out_hw: tuple[int, int],
                 tolerance: float = 1.0) -> list[Finding]:
    """Resized pixels must agree within ``tolerance`` grey levels; report the worst pixel."""
    a, b = trained(image, *out_hw), served(image, *out_hw)
    worst = max(((abs(pa - pb), (y, x)) for y, (ra, rb) in enumerate(zip(a, b))
                 for x, (qa, qb) in enumerate(zip(ra, rb)) for pa, pb in zip(qa, qb)), default=(0.0, None))
    if worst[0] > tolerance:
        return [Finding("resize", f"max difference {worst[0]:g} grey levels at pixel {worst[1]} "
                        f"(tolerance {tolerance:g}): interpolation differs")]
    return []
# --8<-- [end:resize]


# --8<-- [start:feature-defaults]
def check_feature_defaults(trained: Callable[[Mapping], Mapping], served: Callable[[Mapping], Mapping],
                           record: Mapping, features: Sequence[str]) -> list[Finding]:
    """Remove one feature at a time from a complete record; both paths must fill it with the same value."""
    findings = []
    for name in features:
        if name not in record:
            raise ValueError(f"feature {name!r} is not in the fixture record (fields: {sorted(record)})")
        partial = {k: v for k, v in record.items() if k != name}
        a, b = trained(partial).get(name), served(partial).get(name)
        if a != b:
            findings.append(Finding("feature-default", f"missing {name!r} becomes {a!r} in training, "
                                    f"{b!r} in serving"))
    return findings
# --8<-- [end:feature-defaults]
