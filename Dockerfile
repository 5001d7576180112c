FROM python:3.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY api ./api
COPY worker ./worker
COPY shared ./shared
RUN pip install --no-cache-dir .
RUN useradd --create-home taxonomist
USER taxonomist
ENV TAXONOMY_DIR=/taxonomies \
    TAXONOMIST_CACHE_DIR=/home/taxonomist/.cache/taxonomist
EXPOSE 8000
CMD ["taxonomist", "serve", "--host", "0.0.0.0", "--port", "8000"]
