"""Course editions and grading with nbgrader (``python -m memorykit.classroom course``).

* ``build_course``: the course directory, the student edition (``release/``) and the instructor
  edition (``instructor/``): ``memorykit.classroom.course.release``.
* ``submit``, ``autograde``: grade a student's notebooks with nbgrader's autograder and read back
  each graded cell's points and feedback: ``memorykit.classroom.course.grading``.

Needs the ``course`` extra (nbgrader). The instructor's side: ``docs/INSTRUCTOR_GUIDE.md``.
"""

from memorykit.classroom.course.release import Course, build_course
from memorykit.classroom.course.grading import CellGrade, Grades, LessonGrade, autograde, submit

__all__ = ["Course", "build_course", "CellGrade", "Grades", "LessonGrade", "autograde", "submit"]
