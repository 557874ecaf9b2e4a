# strikebot: the web page, feeds, API and chat bots in one small image.
#   docker build -t strikebot .
#   docker run -p 8080:8080 -v strikebot-data:/app/data strikebot
# See README.md ("Docker") for tokens and PostgreSQL.

# -- build: install the package and its dependencies into a virtualenv -----------------------
FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/venv
# Dependencies first (cached while only the code changes), then the package itself.
COPY pyproject.toml README.md ./
RUN mkdir -p bot adapters \
    && /opt/venv/bin/pip install . \
    && /opt/venv/bin/pip uninstall -y strikebot
COPY bot ./bot
COPY adapters ./adapters
RUN /opt/venv/bin/pip install --no-deps . \
    && find /opt/venv -name '__pycache__' -prune -exec rm -rf {} +

# -- run: the virtualenv, the campaign file, a non-root user and a data volume ----------------
FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    STRIKEBOT_HTTP_HOST=0.0.0.0 \
    STRIKEBOT_HTTP_PORT=8080 \
    STRIKEBOT_DATABASE_URL=sqlite+aiosqlite:////app/data/strikebot.db \
    STRIKEBOT_CONFIG=/app/config/strike.toml
RUN groupadd --system --gid 10001 strikebot \
    && useradd --system --uid 10001 --gid strikebot --home-dir /app --no-create-home \
       --shell /usr/sbin/nologin strikebot \
    && mkdir -p /app/data \
    && chown strikebot:strikebot /app/data
WORKDIR /app
COPY --from=build /opt/venv /opt/venv
COPY config ./config
USER strikebot
VOLUME ["/app/data"]
EXPOSE 8080
# Healthy while the web server answers and the database can be read and written (/healthz -> 200).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('STRIKEBOT_HTTP_PORT', '8080') + '/healthz', timeout=4)"]
STOPSIGNAL SIGTERM
CMD ["strikebot", "run"]
