import { useRef, useState, type FormEvent } from 'react';
import { api, errorMessage, uploadForm } from '../api/client';
import type { Collection, KnowledgeDocument, Page, ScoredChunk } from '../api/types';
import { useAuth } from '../auth/auth-context';
import { EmptyState, ErrorNote, Field, Loading, Note, PageHeader } from '../components/ui';
import { bytes } from '../lib/format';
import { useLoad } from '../lib/use-load';

const ACCEPT = '.txt,.md,.markdown,.html,.htm,.pdf,text/plain,text/markdown,text/html,application/pdf';

/** Knowledge collections: create, upload documents (with progress), search. */
export function KnowledgePage() {
  const { user } = useAuth();
  const isAdmin = user?.role === 'admin';
  const collections = useLoad((signal) => api.get<Page<Collection>>('/knowledge/collections?limit=100', signal), []);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const items = collections.data?.items ?? [];
  const selected = items.find((collection) => collection.id === selectedId) ?? items[0] ?? null;

  return (
    <>
      <PageHeader title="Knowledge" description="Collections of documents the agent searches when a workflow lists them in knowledge_base_ids." />
      {collections.error ? (
        <ErrorNote onRetry={collections.reload}>{collections.error}</ErrorNote>
      ) : !collections.data ? (
        <Loading />
      ) : (
        <div className="knowledge-layout">
          <section className="card" aria-labelledby="collections-title">
            <h2 id="collections-title">Collections</h2>
            {items.length === 0 ? (
              <p className="muted">{isAdmin ? 'No collections yet: name one below to start.' : 'No collections yet. An administrator can create them.'}</p>
            ) : (
              <ul className="select-list" aria-label="Collections">
                {items.map((collection) => (
                  <li key={collection.id}>
                    <button type="button" aria-current={selected?.id === collection.id ? 'true' : undefined} onClick={() => setSelectedId(collection.id)}>
                      <span>{collection.name}</span>
                      <span className="muted small">
                        {collection.document_count} doc{collection.document_count === 1 ? '' : 's'}
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
            )}
            {isAdmin && (
              <NewCollection
                onCreated={(collection) => {
                  collections.reload();
                  setSelectedId(collection.id);
                }}
              />
            )}
          </section>
          {selected ? (
            <div className="stack">
              {isAdmin && <Upload key={selected.id} collection={selected} onUploaded={collections.reload} />}
              <Search key={`search-${selected.id}`} collection={selected} />
            </div>
          ) : (
            <EmptyState title="No collection selected">
              Create a collection, upload text, Markdown, HTML or PDF files to it, then list it in a workflow’s knowledge_base_ids.
            </EmptyState>
          )}
        </div>
      )}
    </>
  );
}

function NewCollection({ onCreated }: { onCreated(collection: Collection): void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      onCreated(await api.post<Collection>('/knowledge/collections', { name: name.trim() }));
      setName('');
    } catch (reason) {
      setError(errorMessage(reason));
    }
  };
  return (
    <form onSubmit={submit} className="inline-form">
      <Field label="New collection name" error={error}>
        {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} required maxLength={100} placeholder="e.g. runbooks" />}
      </Field>
      <button type="submit" className="btn" disabled={!name.trim()}>
        Create collection
      </button>
    </form>
  );
}

function Upload({ collection, onUploaded }: { collection: Collection; onUploaded(): void }) {
  const input = useRef<HTMLInputElement>(null);
  const [progress, setProgress] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [uploaded, setUploaded] = useState<KnowledgeDocument[]>([]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const file = input.current?.files?.[0];
    if (!file) return;
    setError(null);
    setProgress(0);
    const form = new FormData();
    form.append('file', file, file.name);
    try {
      const document = await uploadForm<KnowledgeDocument>(`/knowledge/collections/${collection.id}/documents`, form, setProgress);
      setUploaded((current) => [document, ...current]);
      if (input.current) input.current.value = '';
      onUploaded();
    } catch (reason) {
      setError(errorMessage(reason));
    } finally {
      setProgress(null);
    }
  };

  return (
    <section className="card" aria-labelledby="upload-title">
      <h2 id="upload-title">Add a document to {collection.name}</h2>
      <form onSubmit={submit} className="row align-end">
        <Field label="Document file" hint="Text, Markdown, HTML or PDF, up to 20 MiB">
          {(props) => <input {...props} ref={input} type="file" accept={ACCEPT} required />}
        </Field>
        <button type="submit" className="btn primary" disabled={progress !== null}>
          Upload
        </button>
      </form>
      {progress !== null && (
        <div className="progress-row">
          <progress max={1} value={progress} aria-label="Upload progress" />
          <span className="muted small">{progress < 1 ? `${Math.round(progress * 100)} %` : 'Indexing…'}</span>
        </div>
      )}
      <ErrorNote>{error}</ErrorNote>
      {uploaded.length > 0 && (
        <Note tone="success">
          Added:{' '}
          {uploaded
            .map((document) => `${document.title} (${bytes(document.size_bytes)}, ${document.chunk_count} passage${document.chunk_count === 1 ? '' : 's'})`)
            .join('; ')}
        </Note>
      )}
    </section>
  );
}

function Search({ collection }: { collection: Collection }) {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState<ScoredChunk[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const answer = await api.post<{ results: ScoredChunk[] }>(`/knowledge/collections/${collection.id}/search`, { query, top_k: 8 });
      setResults(answer.results);
    } catch (reason) {
      setError(errorMessage(reason));
    }
  };
  return (
    <section className="card" aria-labelledby="search-title">
      <h2 id="search-title">Search {collection.name}</h2>
      <form onSubmit={submit} className="row align-end" role="search">
        <Field label="Search query">
          {(props) => (
            <input
              {...props}
              type="search"
              value={query}
              onChange={(event) => setQuery(event.target.value)}
              required
              placeholder="What the agent would look up"
            />
          )}
        </Field>
        <button type="submit" className="btn" disabled={!query.trim()}>
          Search
        </button>
      </form>
      <ErrorNote>{error}</ErrorNote>
      {results && results.length === 0 && (
        <p className="muted">
          No passage matches. {collection.document_count === 0 ? 'The collection is empty: upload a document first.' : 'Try other words.'}
        </p>
      )}
      {results && results.length > 0 && (
        <ol className="results" aria-label="Search results">
          {results.map((chunk) => (
            <li key={chunk.chunk_id}>
              <div className="result-head">
                <strong>{chunk.title}</strong>
                <span className="muted small">
                  passage {chunk.position + 1} · score {chunk.score.toFixed(2)}
                </span>
              </div>
              <p>{chunk.text}</p>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
