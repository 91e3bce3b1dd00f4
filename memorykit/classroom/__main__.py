"""``python -m memorykit.classroom course release|grade``: the course's command line.

The library's own command line (``python -m memorykit tune``) knows nothing of the course;
the classroom's lives here (``memorykit.classroom.course.command``).
"""

import argparse
import sys

from memorykit.classroom.course.command import add_course_commands, run_course


def main(argv: list[str] | None = None) -> int:
    """Run the classroom's command line on ``argv`` (default ``sys.argv[1:]``)."""
    parser = argparse.ArgumentParser(prog="python -m memorykit.classroom",
                                     description="memorykit's course: editions and grading.")
    add_course_commands(parser.add_subparsers(dest="command", required=True))
    return run_course(parser.parse_args(argv), parser)


if __name__ == "__main__":
    sys.exit(main())
