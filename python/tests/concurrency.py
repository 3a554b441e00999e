"""Running test work in threads, with their failures brought back to the
test (an exception in a thread would otherwise be lost)."""

import threading


def in_threads(work, count):
    """Runs work(i) for i < count, each in its own thread, and returns the
    exceptions they raised."""
    errors = []

    def run(i):
        try:
            work(i)
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
