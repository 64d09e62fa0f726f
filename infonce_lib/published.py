r"""Published figures the book quotes: each one here once, with its citation.

Nothing in this module is computed. Every number below was printed in a paper, is typed here
as printed, and is quoted by the book (never re-derived from it). Each record names the paper
by its key in ``references.bib``, the table, section or page it comes from, the protocol that
produced it in one line, and which text the values were checked against.

The book's own numbers come from the other modules; the tests check that these quoted values
agree with what the library can compute about them (for instance that McAllester & Stratos's
true informations are :math:`-\tfrac{d}{2}\ln(1 - \rho^2)` for their correlations, to the
printed decimals), never that a value equals itself.

Records
-------
* :data:`MCALLESTER_STRATOS_TABLE1`: true information and eight estimates on three
  128-dimensional correlated Gaussians, :math:`N = 128` (McAllester & Stratos, 2020, Table 1),
  including both difference-of-entropies (DoE) estimators.
* :data:`SIMCLR_TABLE5`: linear evaluation against :math:`\ell_2` normalisation and
  temperature (Chen et al., 2020, Table 5).
* :data:`SIMCLR_BATCH_SIZES`: the batch sizes SimCLR trains with (its section 2.2 and 2.3).
* :data:`CLIP_TEMPERATURE`: CLIP's initial temperature, the cap on its logit scale and its
  batch size (Radford et al., 2021, section 2.5), the logit scale its released ViT-B/32
  ends with and the embedding dimension of ViT-L/14.
* :data:`MOCO_SETTINGS`: MoCo's temperature, queue length, momentum and embedding dimension
  (He et al., 2020).
* :data:`POOLE_STAIRCASE`: the dimension, batch size, information levels, steps per level,
  critic, optimiser and estimators of Poole et al.'s staircase (2019), from their Colab.
* :data:`WANG_ISOLA_METRICS`: the exponent :math:`\alpha` of the alignment metric and the
  scale :math:`t` of the uniformity metric that Wang & Isola (2020) use.
* :data:`UCI_DIGITS`: how Alpaydin & Kaynak (1998) made the handwritten digits of chapter 8
  (writers, bitmaps, blocks, grey levels) and how many their test set holds.

Examples
--------
>>> from infonce_lib.published import MCALLESTER_STRATOS_TABLE1 as t
>>> t.citation, t.column("cpc")
('mcallester2020limitations', (2.73, 4.82, 4.85))
>>> t.row(1)["doe_gaussian"], t.row(1)["doe_logistic"]
(18.38, 18.42)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "CLIP_TEMPERATURE",
    "MCALLESTER_STRATOS_TABLE1",
    "MOCO_SETTINGS",
    "POOLE_STAIRCASE",
    "PUBLISHED",
    "SIMCLR_BATCH_SIZES",
    "SIMCLR_TABLE5",
    "UCI_DIGITS",
    "WANG_ISOLA_METRICS",
    "PublishedSettings",
    "PublishedTable",
]


def _frozen(mapping: Mapping[str, object]) -> Mapping[str, object]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class PublishedTable:
    """A table of published numbers, typed as printed, with where it comes from.

    Attributes
    ----------
    citation : str
        The paper's key in ``references.bib``.
    where : str
        Table (and section or page) of the paper.
    protocol : str
        What produced the numbers, in one line.
    columns : tuple of str
        Column names (the paper's headers, in ``snake_case``).
    rows : tuple of tuple
        The rows, in the paper's order; one value per column.
    settings : Mapping
        The fixed settings of the table (dimension, batch size, ...), read-only.
    checked : str
        The text the values were checked against.
    headers : Mapping
        ``{column: header}``, the paper's headers exactly as printed, for the columns whose
        printed header was checked (read-only; may be empty).

    Examples
    --------
    >>> from infonce_lib.published import SIMCLR_TABLE5
    >>> SIMCLR_TABLE5.column("temperature")
    (0.05, 0.1, 0.5, 1.0, 10.0, 100.0)
    >>> SIMCLR_TABLE5.column("x")
    Traceback (most recent call last):
    ...
    KeyError: "column 'x' is not in SimCLR's Table 5; columns: ('l2_normalised', ..."
    """

    name: str
    citation: str
    where: str
    protocol: str
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    checked: str
    settings: Mapping[str, object] = field(default_factory=lambda: _frozen({}))
    headers: Mapping[str, str] = field(default_factory=lambda: _frozen({}))

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(
                    f"{self.name}: row {i} has {len(row)} values for {len(self.columns)} columns"
                )
        unknown = sorted(set(self.headers) - set(self.columns))
        if unknown:
            raise ValueError(f"{self.name}: headers for columns it does not have: {unknown}")
        object.__setattr__(self, "settings", _frozen(self.settings))
        object.__setattr__(self, "headers", _frozen(self.headers))

    def column(self, name: str) -> tuple[object, ...]:
        """The values of column ``name``, top to bottom (KeyError names the columns)."""
        if name not in self.columns:
            raise KeyError(f"column {name!r} is not in {self.name}; columns: {self.columns}")
        j = self.columns.index(name)
        return tuple(row[j] for row in self.rows)

    def row(self, index: int) -> dict[str, object]:
        """Row ``index`` (0-based, the paper's order) as ``{column: value}``."""
        if not isinstance(index, int) or isinstance(index, bool):
            raise TypeError(f"index must be an int; got {type(index).__name__}")
        if not -len(self.rows) <= index < len(self.rows):
            raise IndexError(f"{self.name} has {len(self.rows)} rows; index {index} is outside")
        return dict(zip(self.columns, self.rows[index], strict=True))


@dataclass(frozen=True)
class PublishedSettings:
    """Published scalar settings (hyperparameters) with where each is stated.

    Attributes
    ----------
    citation : str
        The paper's key in ``references.bib``.
    values : Mapping
        ``{name: value}`` as printed, read-only.
    where : Mapping
        ``{name: section or page}`` for every entry of ``values``, read-only.
    checked : str
        The text the values were checked against.

    Examples
    --------
    >>> from infonce_lib.published import MOCO_SETTINGS
    >>> MOCO_SETTINGS.values["temperature"], MOCO_SETTINGS.values["queue_length"]
    (0.07, 65536)
    """

    name: str
    citation: str
    values: Mapping[str, object]
    where: Mapping[str, str]
    checked: str

    def __post_init__(self) -> None:
        if set(self.values) != set(self.where):
            raise ValueError(f"{self.name}: every value needs a location, and only values do")
        object.__setattr__(self, "values", _frozen(self.values))
        object.__setattr__(self, "where", _frozen(self.where))


# ---------------------------------------------------------------- McAllester & Stratos (2020)

#: McAllester & Stratos (2020), Table 1. Rows: the three Gaussians, in the paper's order.
#: ``rho`` is not a column of the printed table: it is the correlation of the authors' code
#: (``--rho``, 0.5 in their README's example, whose output reproduces the middle row) and
#: reproduces the printed true informations through -(d/2) ln(1 - rho^2) (see the tests).
MCALLESTER_STRATOS_TABLE1 = PublishedTable(
    name="McAllester & Stratos's Table 1",
    citation="mcallester2020limitations",
    where="Table 1 (experiments on correlated Gaussians)",
    protocol=(
        "d = 128 coordinate pairs of standard normals with correlation rho, N = 128 samples "
        "per training step; each estimator is a neural network trained with Adam (critics and "
        "DoE's conditional model: one hidden tanh layer); as the authors' code does it, the "
        "reported value is one final evaluation on N = 128 fresh pairs, from the best of 100 "
        "runs with random hyperparameters, best meaning closest to the true I; in nats"
    ),
    columns=(
        "true_information",
        "dv",
        "mine",
        "nwj",
        "nwj_js",
        "cpc",
        "cpc_nwj",
        "doe_gaussian",
        "doe_logistic",
    ),
    rows=(
        (4.13, 2.72, 2.57, 1.99, 1.50, 2.73, 2.77, 4.19, 4.13),
        (18.41, 10.27, 9.38, 9.25, 5.55, 4.82, 8.18, 18.38, 18.42),
        (106.29, 61.96, 34.56, 50.46, 13.41, 4.85, 10.45, 104.18, 104.16),
    ),
    settings={
        "dim": 128,
        "batch_size": 128,
        "rho": (0.25, 0.5, 0.9),
        # whether each row's rho is read from the authors' code (0.5: the README's command;
        # 0.9: the default of main.py) or was chosen to reproduce the printed true I (0.25)
        "rho_from_code": (False, True, True),
        "runs": 100,
        "interpolation_alphas": (0.01, 0.5, 0.99),
        "mine_carry_rates": (0.99, 0.9, 0.5),
    },
    headers={
        "dv": "DV",
        "mine": "MINE",
        "nwj": "NWJ",
        "nwj_js": "NWJ (JS)",
        "cpc": "CPC",
        "cpc_nwj": "CPC+NWJ",
        "doe_gaussian": "DoE (Gaussian)",
        "doe_logistic": "DoE (Logistic)",
    },
    checked=(
        "the middle row (all nine values) against the example output in the README of the "
        "authors' code, github.com/karlstratos/doe (dv 10.27, mine 9.38, nwj 9.25, nwjjs 5.55, "
        "cpc 4.82, interpol 8.18, doe 18.38, doe_l 18.42, I(X,Y) 18.41); the true informations "
        "of all three rows against the exact formula at rho = 0.25, 0.5, 0.9 (0.5: the README's "
        "command; 0.9: the default of its main.py; 0.25: the correlation that gives the printed "
        "4.13); the third row's CPC, 4.85, against ln 128 rounded; the estimators' headers "
        "against the labels in the repository's plot.py; the settings runs (the README's "
        "--nruns 100), interpolation_alphas (the alpha grid of main.py's search) and "
        "mine_carry_rates (its grid of MINE's moving-average carry rate) against the authors' "
        "code, and rho_from_code against its README and main.py. The other fifteen values "
        "(rows 1 and 3) "
        "come from third-party transcriptions of the table (two agree on all 27 values); the "
        "paper's own table could not be read here (stored copies of arXiv 1811.04251 and of "
        "PMLR 108 reach only the abstract and introduction), so they are not checked against it"
    ),
)

# ---------------------------------------------------------------- SimCLR (Chen et al., 2020)

#: SimCLR's Table 5: linear evaluation (ImageNet top-1, %) of ResNet-50 models trained with
#: NT-Xent with and without l2 normalisation at several temperatures. ``entropy`` and
#: ``contrastive_accuracy`` are the paper's other two columns (the latter in %).
SIMCLR_TABLE5 = PublishedTable(
    name="SimCLR's Table 5",
    citation="chen2020simclr",
    where="Table 5, section 5.1 (p. 7 of arXiv:2002.05709v3)",
    protocol=(
        "ImageNet pretraining with NT-Xent, linear evaluation top-1 (%); the contrastive "
        "distribution is over 4096 examples"
    ),
    columns=("l2_normalised", "temperature", "entropy", "contrastive_accuracy", "top1"),
    rows=(
        (True, 0.05, 1.0, 90.5, 59.7),
        (True, 0.1, 4.5, 87.8, 64.4),
        (True, 0.5, 8.2, 68.2, 60.7),
        (True, 1.0, 8.3, 59.1, 58.0),
        (False, 10.0, 0.5, 91.7, 57.2),
        (False, 100.0, 0.5, 92.1, 57.0),
    ),
    settings={"contrastive_distribution_size": 4096, "projection_dim": 128},
    checked=(
        "three independent text extractions of the paper (table and caption agree in all six "
        "rows); the caption says 'The contrastive distribution is over 4096 examples', the "
        "default batch size of section 2.3, whose 128-dimensional projection (section 2.3, "
        "Default setting) the models of the table use"
    ),
)

#: SimCLR's batch sizes: the range studied and the default of its ablations.
SIMCLR_BATCH_SIZES = PublishedSettings(
    name="SimCLR's batch sizes",
    citation="chen2020simclr",
    values={
        "smallest_batch_size": 256,
        "largest_batch_size": 8192,
        "negatives_per_positive_at_largest": 16382,
        "default_batch_size": 4096,
    },
    where={
        "smallest_batch_size": "section 2.2",
        "largest_batch_size": "section 2.2",
        "negatives_per_positive_at_largest": "section 2.2",
        "default_batch_size": "section 2.3 (default setting)",
    },
    checked="a text extraction of the paper, sections 2.2 and 2.3",
)

# ---------------------------------------------------------------- CLIP (Radford et al., 2021)

#: CLIP's temperature: learned by the loss itself, as a log-parameterized multiplicative
#: scalar "to avoid turning [it] as a hyper-parameter" (section 2.3); initialised to the
#: equivalent of 0.07, "from (Wu et al., 2018)", and clipped so that the logits are never
#: scaled by more than 100 (section 2.5); the minibatch size of section 2.5. Two values are
#: not in the paper and say so in ``where``: the logit scale the released ViT-B/32 model
#: ends with (the clip, 100, i.e. tau = 0.01) and the embedding dimension of ViT-L/14, the
#: model the paper reports as "CLIP" (two models: a row using both is a composite).
CLIP_TEMPERATURE = PublishedSettings(
    name="CLIP's temperature",
    citation="radford2021clip",
    values={
        "initial_temperature": 0.07,
        "max_logit_scale": 100,
        "batch_size": 32768,
        "released_logit_scale": 100,
        "embedding_dim": 768,
    },
    where={
        "initial_temperature": "section 2.5 (Training), p. 5 of arXiv:2103.00020",
        "max_logit_scale": "section 2.5 (Training), p. 5 of arXiv:2103.00020",
        "batch_size": "section 2.5 (Training), p. 5 of arXiv:2103.00020",
        "released_logit_scale": (
            "not in the paper: the logit scale exp(t) stored in the released ViT-B/32 weights "
            "(openai/CLIP), as printed by independent public code that loads them "
            "(logit_scale.exp() = 100.00 for ViT-B/32); the weights themselves were not read. "
            "An OpenCLIP maintainer says of OpenCLIP's own runs (not OpenAI's weights) that "
            "the scale 'usually gets to the max (100) if training long enough' "
            "(github.com/mlfoundations/open_clip, issue 214)"
        ),
        "embedding_dim": (
            "Table 20 (CLIP-ViT hyperparameters) of arXiv:2103.00020 for ViT-L/14, not read "
            "(an image in the stored copies); 768 is the embed_dim of the released ViT-L/14 "
            "in independent re-implementations of the released models"
        ),
    },
    checked=(
        "text extractions of sections 2.3 and 2.5 (two independent copies agree); the two "
        "values not in the paper as their locations say"
    ),
)

# ---------------------------------------------------------------- MoCo (He et al., 2020)

#: MoCo's settings: the temperature of its InfoNCE loss, the dimension of its
#: l2-normalised embeddings (both "[61]", Wu et al., 2018, in MoCo's references: MoCo takes
#: them from there, not from a search of its own), and the queue length and momentum m of
#: its ImageNet comparison. The queue length is the book's Q (reference/notation.md): each
#: query has Q queued negatives (the other queries' keys are not negatives, Algorithm 1), so
#: K = Q + 1 candidates.
MOCO_SETTINGS = PublishedSettings(
    name="MoCo's settings",
    citation="he2020moco",
    values={"temperature": 0.07, "queue_length": 65536, "momentum": 0.999, "dim": 128},
    where={
        "temperature": (
            "section 3.3, Technical details ('set as 0.07 [61]', [61] = Wu et al.); the same "
            "value is the default of the --nce-t option ('temperature parameter for softmax') "
            "of main.py in Wu et al.'s released code, github.com/zhirongw/lemniscate.pytorch"
        ),
        "queue_length": "section 4.1, Comparison with previous results",
        "momentum": "section 4.1, Comparison with previous results",
        "dim": "section 3.3, Technical details ('128-D [61]')",
    },
    checked="text extractions of sections 3.3 and 4.1 (several independent copies agree)",
)

# ---------------------------------------------------------------- Poole et al. (2019)

#: Poole et al.'s staircase: a correlated Gaussian of this dimension (d independent
#: coordinate pairs) whose information steps through these levels, critics trained at this
#: batch size, each level held for this many training steps.
POOLE_STAIRCASE = PublishedSettings(
    name="Poole et al.'s staircase",
    citation="poole2019variational",
    values={
        "dim": 20,
        "batch_size": 64,
        "levels": (2.0, 4.0, 6.0, 8.0, 10.0),
        "steps_per_level": 4000,
        "critic": "concat",
        "hidden_layers": 2,
        "hidden_width": 256,
        "learning_rate": 5e-4,
        "adam_epsilon": 1e-7,
        "alpha_logits": (-5.0, 0.0, 5.0),
        "baseline_layers": 2,
        "baseline_width": 512,
        "estimators": ("NWJ", "TUBA", "InfoNCE", "JS", "I_alpha"),
        "js_evaluated_as": "NWJ at f",
    },
    where={
        "dim": "the authors' Colab (data_params: dim 20)",
        "batch_size": "the authors' Colab (data_params: batch_size 64)",
        "levels": "the authors' Colab (mi_schedule: the true information stepped over training)",
        "steps_per_level": "the authors' Colab (20000 iterations over the five levels)",
        "critic": "the authors' Colab (critic_type = 'concat': one MLP of [x, y]; "
        "'separable' is its alternative)",
        "hidden_layers": "the authors' Colab (critic_params: layers 2, ReLU)",
        "hidden_width": "the authors' Colab (critic_params: hidden_dim 256)",
        "learning_rate": "the authors' Colab (opt_params: Adam, learning_rate 5e-4)",
        "adam_epsilon": "the authors' Colab (Keras's Adam, whose default epsilon is 1e-7)",
        "alpha_logits": "the authors' Colab (alpha_logit in [-5, 0, 5]: alpha = "
        "sigmoid(alpha_logit), about 0.0067, 0.5 and 0.9933, labelled 0.01, 0.5 and 0.99)",
        "baseline_layers": "the authors' Colab (I_alpha's and TUBA's learned baseline: an "
        "MLP of y)",
        "baseline_width": "the authors' Colab (the baseline MLP's hidden width)",
        "estimators": "the authors' Colab (the staircase's estimators; no DV or MINE)",
        "js_evaluated_as": "the authors' Colab (js_lower_bound returns nwj_lower_bound(f), "
        "with nwj_lower_bound(s) = tuba_lower_bound(s - 1))",
    },
    checked=(
        "the authors' Colab, github.com/google-research/google-research, vbmi/vbmi_demo.ipynb "
        "(data_params: dim 20, batch_size 64; mi_schedule rounds a linspace over the "
        "iterations to 2, 4, 6, 8, 10 nats; opt_params: 20000 iterations, so 4000 per "
        "level, learning rate 5e-4; critic_params: 2 layers of 256 ReLU units, embed_dim 32 "
        "(used by the separable critic only); critic_type 'concat'; the estimators and "
        "their baseline); the paper's own text was not in the stored copies that search "
        "reaches (only its abstract), so every value here is quoted from the Colab"
    ),
)

# ---------------------------------------------------------------- Wang & Isola (2020)

#: Wang & Isola's metrics: the exponent alpha of the alignment metric
#: E ||f(x) - f(y)||^alpha and the scale t of the uniformity metric
#: log E exp(-t ||f(x) - f(y)||^2), at the values they use.
WANG_ISOLA_METRICS = PublishedSettings(
    name="Wang & Isola's alignment and uniformity metrics",
    citation="wang2020alignment",
    values={"alignment_alpha": 2, "uniformity_t": 2},
    where={
        "alignment_alpha": (
            "section 4.1.1 (L_align(f; alpha)); the value: Figure 6's implementation "
            "(lalign(x, y, alpha=2)) and Table 1 (L_align(alpha=2)), arXiv:2005.10242"
        ),
        "uniformity_t": (
            "section 4.1.2 (L_uniform(f; t)); the value: Figure 6's implementation "
            "(lunif(x, t=2)) and Table 1 (L_uniform(t=2)), arXiv:2005.10242"
        ),
    },
    checked=(
        "the paper's text (an ar5iv rendering of arXiv:2005.10242: sections 4.1.1 and 4.1.2, "
        "Figure 6, Table 1) and the defaults of the authors' reference code, "
        "github.com/SsnL/align_uniform (align_loss(x, y, alpha=2), uniform_loss(x, t=2))"
    ),
)

# ---------------------------------------------------------------- UCI digits (Alpaydin & Kaynak)

#: The handwritten digits of chapter 8: the test set (``optdigits.tes``) of Alpaydin &
#: Kaynak's data set. Each 32 x 32 bitmap was cut into non-overlapping 4 x 4 blocks and the
#: pixels that were on were counted in each, so every pixel of the 8 x 8 image is an integer
#: from 0 to 16 (17 grey levels); the test set's digits were written by 13 people (the
#: training set's by 30 others).
UCI_DIGITS = PublishedSettings(
    name="The UCI handwritten digits",
    citation="alpaydin1998optdigits",
    values={
        "test_set_images": 1797,
        "writers": 13,
        "bitmap_side": 32,
        "block_side": 4,
        "grey_levels": 17,
    },
    where={
        "test_set_images": "the data set's description (optdigits.names), 5. Number of Instances",
        "writers": "the data set's description, 4. Relevant Information",
        "bitmap_side": "the data set's description, 4. Relevant Information",
        "block_side": "the data set's description, 4. Relevant Information",
        "grey_levels": "the data set's description, 4. and 7. (integers in the range 0..16)",
    },
    checked="the UCI repository's page and optdigits.names, as quoted by OpenML and scikit-learn",
)

#: Every published table and setting of this module, by its name (a read-only
#: mapping): ``PUBLISHED["SIMCLR_TABLE5"] is SIMCLR_TABLE5``; the tests check that it holds
#: every record and that each record's citation is a key of ``references.bib``.
PUBLISHED: Mapping[str, PublishedTable | PublishedSettings] = MappingProxyType(
    {
        "MCALLESTER_STRATOS_TABLE1": MCALLESTER_STRATOS_TABLE1,
        "SIMCLR_TABLE5": SIMCLR_TABLE5,
        "SIMCLR_BATCH_SIZES": SIMCLR_BATCH_SIZES,
        "CLIP_TEMPERATURE": CLIP_TEMPERATURE,
        "MOCO_SETTINGS": MOCO_SETTINGS,
        "POOLE_STAIRCASE": POOLE_STAIRCASE,
        "WANG_ISOLA_METRICS": WANG_ISOLA_METRICS,
        "UCI_DIGITS": UCI_DIGITS,
    }
)
