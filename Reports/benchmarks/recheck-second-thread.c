#include <stdio.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <unistd.h>
#include <time.h>
#include <poll.h>
static uint64_t now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000ull+t.tv_nsec;}
static int efd, ep;
static double run(int n){ uint64_t v=1; struct epoll_event e; uint64_t b=now();
 for(int i=0;i<n;i++){ write(efd,&v,8); epoll_wait(ep,&e,1,-1); read(efd,&v,8); v=1;}
 return (double)(now()-b)/n;}
static pthread_mutex_t m=PTHREAD_MUTEX_INITIALIZER; static pthread_cond_t c=PTHREAD_COND_INITIALIZER; static int stop;
static void* park(void*a){pthread_mutex_lock(&m);while(!stop)pthread_cond_wait(&c,&m);pthread_mutex_unlock(&m);return 0;}
int main(){ efd=eventfd(0,EFD_NONBLOCK); ep=epoll_create1(0); struct epoll_event e={.events=EPOLLIN}; epoll_ctl(ep,EPOLL_CTL_ADD,efd,&e);
 run(100000);
 for(int r=0;r<3;r++){
 printf("single %.0f\n",run(200000));
 pthread_t t; stop=0; pthread_create(&t,0,park,0); usleep(1000);
 printf("parked %.0f\n",run(200000));
 pthread_mutex_lock(&m);stop=1;pthread_cond_signal(&c);pthread_mutex_unlock(&m); pthread_join(t,0);
 printf("after  %.0f\n",run(200000));}
}
